#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Against jdupes itself on a generated tree: the same sets (modulo order and
# hard links) and, without hard links, the same summary line.
. "$(dirname "$0")/../fixtures/lib.sh"
SRC=${SOURCE_ROOT:?}
if ! command -v jdupes >/dev/null; then ok "# SKIP jdupes not installed"; done_testing; fi

python3 - <<'PY'
import os, random
r = random.Random(42)
blobs = [os.urandom(r.choice([1, 100, 4095, 4096, 4097, 65536, 262145, 300000])) for _ in range(60)]
for i in range(400):
    d = f"t/d{i % 17}/s{i % 5}"
    os.makedirs(d, exist_ok=True)
    b = bytearray(r.choice(blobs))
    if r.random() < 0.3:               # same size, one byte off somewhere
        k = r.randrange(len(b)); b[k] ^= 1
    with open(f"{d}/f{i}", "wb") as f:
        f.write(b)
os.makedirs("t/empty", exist_ok=True)
for i in range(3):
    open(f"t/empty/e{i}", "wb").close()
PY
"$DUPSCAN" -rq t > ds.out; jdupes -rq t > jd.out
run python3 "$SRC/tests/fixtures/setcmp.py" ds.out jd.out
[ "$rc" = 0 ] && ok "same sets as jdupes -r ($out)" || not_ok "same sets as jdupes -r" "$out"
expect "same summary as jdupes -m" 0 "$(jdupes -rqm t)" "$DUPSCAN" -rqm t
"$DUPSCAN" -rqz t > ds.out; jdupes -rqz t > jd.out
run python3 "$SRC/tests/fixtures/setcmp.py" ds.out jd.out
[ "$rc" = 0 ] && ok "same sets as jdupes -rz ($out)" || not_ok "same sets as jdupes -rz" "$out"
# hard links: jdupes may list 2 or 3 paths; as inodes the sets agree
ln t/d0/s0/f0 t/hl0; ln t/d1/s1/f1 t/hl1
"$DUPSCAN" -rq t > ds.out; jdupes -rq t > jd.out
run python3 "$SRC/tests/fixtures/setcmp.py" ds.out jd.out
[ "$rc" = 0 ] && ok "same sets modulo hard links ($out)" || not_ok "same sets modulo hard links" "$out"
done_testing
