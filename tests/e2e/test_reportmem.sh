#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Acting on a large report costs memory in proportion to it (issue 31): a
# report of 200,000 sets of two files (70 MB), acted on with -dN, peaks at
# most at twice the report's size above the scan that wrote it (the scan
# handle's usual cost a file); every set keeps its first file, loses its
# second, and nothing else changes. The reader before the streaming one took
# 30-60 KB a file here (about 20 GB). Peak RSS, as in test_memory.sh, with
# MALLOC_PERTURB_ so what malloc hands out counts, touched or not.
. "$(dirname "$0")/../fixtures/lib.sh"

skip_under_sanitizer
# 400,000 files, each deletion journalled (fsynced) before it is made
work_in_shm reportmem
export MALLOC_PERTURB_=165
N=${REPORT_SETS:-200000}

# N sets of two files a directory apart (a and b of each number), 500 sets a directory
python3 - "$N" <<'PY'
import os, sys
n = int(sys.argv[1])
flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL
for k in range(n):
    d = f"t/{k // 500:04d}"
    if k % 500 == 0:
        os.makedirs(d)
    b = f"{k:x}\n".encode()
    for side in "ab":
        fd = os.open(f"{d}/{side}{k}", flags, 0o644)
        os.write(fd, b)
        os.close(fd)
PY

scan=$(peak r.json "$DUPSCAN" -rj t)
size=$(stat -c %s r.json)
sets=$(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["matchSets"]))' r.json)
[ "$sets" = "$N" ] && ok "the scan found the $N sets" || not_ok "the scan found $sets sets, not $N"

act=$(peak act.out "$DUPSCAN" --from-report=r.json -dN -q --journal=j.log)
bound=$(( scan + 2 * size / 1024 ))
echo "# report $size bytes; peak RSS: the scan $scan KiB, acting on its report $act KiB (bound $bound)"
if [ "$scan" -gt 0 ] && [ "$act" -gt 0 ] && [ "$act" -le "$bound" ]; then
  ok "-dN from a report of $N sets: peak $act KiB, at most the scan's plus twice the report ($bound KiB)"
else
  not_ok "-dN from a report of $N sets: peak $act KiB, bound $bound KiB" "$(head -n 5 act.out)"
fi

# every set: a kept, b gone, a's bytes as they were; nothing else in the tree
python3 - "$N" <<'PY' && ok "each set kept its first file, lost its second; nothing else changed" || not_ok "the tree after -dN"
import os, sys
n = int(sys.argv[1])
bad = []
for k in range(n):
    d = f"t/{k // 500:04d}"
    try:
        with open(f"{d}/a{k}", "rb") as f:
            if f.read() != f"{k:x}\n".encode():
                bad.append(f"{d}/a{k}: other bytes")
    except OSError as e:
        bad.append(f"{d}/a{k}: {e}")
    if os.path.lexists(f"{d}/b{k}"):
        bad.append(f"{d}/b{k}: still there")
left = sum(len(fs) for _, _, fs in os.walk("t"))
if left != n:
    bad.append(f"{left} files left, not {n}")
print("\n".join("# " + b for b in bad[:5]))
sys.exit(1 if bad else 0)
PY
done_testing
