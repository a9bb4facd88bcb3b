#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The output is the same, byte for byte, whatever the thread count: sets, order,
# -P stages, JSON, unique files and error reports.
. "$(dirname "$0")/../fixtures/lib.sh"

python3 - <<'PY'
import os, random
r = random.Random(7)
blobs = [os.urandom(r.choice([1, 10, 4095, 4096, 4097, 70000, 300000, 700000])) for _ in range(40)]
for i in range(600):
    d = f"t/d{i % 23}/e{i % 4}"
    os.makedirs(d, exist_ok=True)
    b = bytearray(r.choice(blobs))
    if r.random() < 0.3:
        k = r.choice([0, len(b) // 2, len(b) - 1]); b[k] ^= 1   # first, middle or last byte
    with open(f"{d}/f{i:03d}", "wb") as f:
        f.write(b)
# one size group larger than a first-block slice (256 files): threads share it
for i in range(1500):
    d = f"t/many/m{i % 7}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/g{i:04d}", "w") as f:
        f.write(f"{r.randrange(900):03d}:{i % 3}\n")
    # names an interrupted action leaves: reported in listing order, among
    # entries the walk stats on several threads
    if i % 250 == 0:
        open(f"{d}/.dupscan-tmp-{i:06d}", "w").close()
# large directories (listed ahead on other threads) holding large and small
# subdirectories, some unreadable: reports and records in the same order
for k in range(3):
    for i in range(400):
        d = f"t/big{k}/sub{i % 5}" if i % 3 else f"t/big{k}"
        os.makedirs(d, exist_ok=True)
        with open(f"{d}/a-rather-long-file-name-to-fill-the-directory-{i:04d}", "w") as f:
            f.write(f"{i % 37}\n")
    os.makedirs(f"t/big{k}/closed", exist_ok=True)
PY
mkdir t/locked; printf x > t/locked/a; printf x > t/locked/b
if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 t; as=(setpriv --reuid=65534 --regid=65534 --clear-groups); else as=(); fi
chmod 000 t/locked t/big0/closed t/big2/closed t/big1/sub3
# unreadable files spread over that group's slices: reports stay in order
for i in 0007 0400 0401 0777 1203 1499; do chmod 000 t/many/m*/g$i; done
for args in "-r" "-r --dirs" "-rS -P early -P partial -P fullhash" "-rj" "-ru" "-rm" "-rQ" "-rTT" "-rH -o time"; do
  # shellcheck disable=SC2086
  "${as[@]}" "$DUPSCAN" -q $args --threads=1 t > one.out 2> one.err; rc1=$?
  same=yes
  for n in 2 8; do
    # shellcheck disable=SC2086
    "${as[@]}" "$DUPSCAN" -q $args --threads=$n t > n.out 2> n.err; rcn=$?
    # (JSON's commandLine names the thread count; everything else must match)
    cmp -s <(grep -v '"commandLine"' one.out) <(grep -v '"commandLine"' n.out) && cmp -s one.err n.err && [ "$rc1" = "$rcn" ] || same="no ($n threads)"
  done
  [ "$same" = yes ] && [ -s one.out ] && ok "$args: identical with 1, 2 and 8 threads" || not_ok "$args: differs" "$same" "$(diff one.out n.out | head -5)" "$(diff one.err n.err | head -5)"
done
chmod 755 t/locked t/big0/closed t/big2/closed t/big1/sub3
expect "--threads=0 refused" 2 "" "$DUPSCAN" --threads=0 t
expect_err "--threads named" "invalid value '0' for --threads"
done_testing
