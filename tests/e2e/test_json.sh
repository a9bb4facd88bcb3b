#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -j: valid JSON for any name, lossless for bytes that are not UTF-8, and the same
# data as jdupes -j where jdupes can produce it.
. "$(dirname "$0")/../fixtures/lib.sh"

python3 - <<'PY'
import os
os.makedirs(b"u", exist_ok=True)
os.makedirs(b"x", exist_ok=True)
names = [b"new\nline", b'quo"te', b"back\\slash", b"ctl\x01\x1f\x7f", b"tab\there", "é".encode(),
         "emoji-\U0001F600".encode(), b"plain"]
bad = [b"ff\xff\xfename", b"lone\xc3", b"overlong\xc0\xaf", b"surrogate\xed\xa0\x80", b"max\xf4\x90\x80\x80"]
for n in names:
    with open(b"u/" + n, "wb") as f: f.write(b"same content")
for n in names + bad:
    with open(b"x/" + n, "wb") as f: f.write(b"other content")
PY

check_py() { # NAME PYTHON-CODE (reads the JSON on stdin)
  local name=$1; shift
  if out=$(python3 -c "$1" 2>&1 < j.out); then ok "$name${out:+ ($out)}"; else not_ok "$name" "$out"; fi
}

timeout 20 "$DUPSCAN" -rj x u > j.out; rc=$?
[ "$rc" = 0 ] && ok "-j with ff fe bytes in a name completes" || not_ok "-j completes" "status $rc"
check_py "strict JSON, ASCII only" '
import json, sys
raw = sys.stdin.buffer.read()
raw.decode("ascii")
d = json.loads(raw)
assert set(d) == {"dupscanVersion", "commandLine", "extensionFlags", "matchSets"}, d.keys()
assert len(d["matchSets"]) == 2'
"$DUPSCAN" -r0 x u > z.out
check_py "file names round-trip byte for byte" '
import json, os, sys
d = json.load(sys.stdin)
got = [[os.fsencode(f["filePath"]) for f in s["fileList"]] for s in d["matchSets"]]
raw = open("z.out", "rb").read().split(b"\0\0")
want = [s.split(b"\0") for s in raw if s]
want = [[p for p in s if p] for s in want]
assert got == want, (got, want)
sizes = [s["fileSize"] for s in d["matchSets"]]
assert sizes == [len(b"same content"), len(b"other content")], sizes'
check_py "each invalid byte is one \\udcXX escape" '
import sys
raw = sys.stdin.read()
for esc in ("\\udcff\\udcfe", "lone\\udcc3", "overlong\\udcc0\\udcaf", "surrogate\\udced\\udca0\\udc80", "max\\udcf4\\udc90\\udc80\\udc80",
            "new\\nline" if False else "new\\u000aline", "quo\\\"te", "back\\\\slash", "ctl\\u0001\\u001f\\u007f", "\\u00e9", "\\ud83d\\ude00"):
    assert esc in raw, esc'

if command -v jdupes >/dev/null; then
  "$DUPSCAN" -rj u > j.out; timeout 20 jdupes -rj u > jd.json
  check_py "same data as jdupes -j" '
import json, sys
a = json.load(sys.stdin)["matchSets"]
b = json.load(open("jd.json"))["matchSets"]
norm = lambda sets: sorted((s["fileSize"], sorted(f["filePath"] for f in s["fileList"])) for s in sets)
assert norm(a) == norm(b), (norm(a), norm(b))'
else
  ok "# SKIP jdupes not installed"
fi
"$DUPSCAN" -j u/plain > j.out
check_py "no duplicates: an empty list" '
import json, sys
assert json.load(sys.stdin)["matchSets"] == []'
done_testing
