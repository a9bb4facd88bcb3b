#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --format=text|json|csv|fdupes: text and fdupes are jdupes' listing, json is
# -j's, csv is fclones' (size, hash, count, then a column a path; RFC 4180
# quoting), its hash the XXH64 of the content.
. "$(dirname "$0")/../fixtures/lib.sh"

mkdir -p t/d
printf 'hello\n' > t/a; cp t/a t/d/b; cp t/a 't/comma,name'; cp t/a 't/quote"name'; cp t/a "t/line
break"
printf 'xy' > t/x; cp t/x t/y; printf 'solo' > t/s

expect "--format=text: the default listing" 0 "$("$DUPSCAN" -rq t)" "$DUPSCAN" -rq --format=text t
expect "--format=fdupes: the same listing (fdupes' and jdupes' are one)" 0 "$("$DUPSCAN" -rqS t)" "$DUPSCAN" -rqS --format=fdupes t
# json: -j's document, but for the command line it records
nocmd() { grep -v '"commandLine"'; }
a=$("$DUPSCAN" -rqj t | nocmd); b=$("$DUPSCAN" -rq --format=json t | nocmd)
[ -n "$a" ] && [ "$a" = "$b" ] && ok "--format=json: -j's document" || not_ok "--format=json" "$(diff <(echo "$a") <(echo "$b"))"

run "$DUPSCAN" -rq --format=csv t
[ "$rc" = 0 ] && ok "--format=csv: status 0" || not_ok "--format=csv status" "$rc" "$err"
printf '%s\n' "$out" > out.csv
python3 - out.csv t <<'PY' && ok "--format=csv: header, rows as fclones writes them, names quoted, hashes the contents' XXH64" || not_ok "--format=csv rows" "$out"
import csv, ctypes, ctypes.util, os, sys
lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
lib.XXH64.restype = ctypes.c_ulonglong
lib.XXH64.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_ulonglong]
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["size", "hash", "count", "files"], rows[0]
want = {}
for dp, _, fs in os.walk(sys.argv[2]):
    for f in fs:
        p = os.path.join(dp, f)
        want.setdefault(open(p, "rb").read(), []).append(p)
want = {k: sorted(v) for k, v in want.items() if len(v) > 1}
got = {}
for r in rows[1:]:
    size, h, count, files = int(r[0]), r[1], int(r[2]), r[3:]
    data = open(files[0], "rb").read()
    assert size == len(data) and count == len(files), r
    assert h == "%016x" % lib.XXH64(data, len(data), 0), (h, r)
    got[data] = sorted(files)
assert got == want, (got, want)
PY

run "$DUPSCAN" -rq --format=xml t
[ "$rc" = 2 ] && expect_err "--format=xml: usage error" "invalid value 'xml' for --format"
run "$DUPSCAN" -rqj --format=csv t
[ "$rc" = 2 ] && expect_err "-j with --format=csv: usage error" "two formats"
for other in -m -u -f -0 --dirs "-dN --dry-run"; do
  # shellcheck disable=SC2086
  run "$DUPSCAN" -rq --format=csv $other t
  [ "$rc" = 2 ] && expect_err "--format=csv with $other: usage error" "refused with"
done
# a kept file unreadable when its hash is taken: said, the row without a hash, status 1
if [ "$(id -u)" != 0 ]; then
  chmod 000 t/x
  run "$DUPSCAN" -rq --format=csv t
  chmod 644 t/x
  [ "$rc" = 1 ] && grep -q "t/x: $E_ACCES" <<< "$err" && ok "--format=csv: an unreadable file: named, status 1" || not_ok "unreadable csv" "$rc" "$err"
fi
done_testing
