#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --from-report=FILE: act later on the sets of a -j report a person may have
# edited; every file is checked against the identity in the report and
# compared byte by byte with the kept file before it is changed; a report that
# does not hold is refused whole.
. "$(dirname "$0")/../fixtures/lib.sh"

tree() {
  rm -rf t; mkdir -p t/d
  head -c 5000 /dev/urandom > t/a; cp t/a t/b; cp t/a t/d/c          # set 1
  head -c 7000 /dev/urandom > t/x; cp t/x t/y                          # set 2
  head -c 5000 /dev/urandom > t/u                                      # unique, A's size
}
# edit REPORT PYTHON: rewrite the report's JSON as d (the parsed document)
edit() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); $2; json.dump(d, open(sys.argv[1], 'w'))" "$1"; }
snap() { find t -type f -printf '%p %s\n' | sort; sha1sum $(find t -type f | sort) 2>/dev/null; }

tree
"$DUPSCAN" -rqj t > r.json
run "$DUPSCAN" --from-report=r.json -dN
[ "$rc" = 0 ] && [ -e t/a ] && [ ! -e t/b ] && [ ! -e t/d/c ] && [ -e t/x ] && [ ! -e t/y ] && [ -e t/u ] &&
  ok "-dN from a report: each set keeps its first file" || not_ok "-dN" "$rc" "$out" "$err"

# edited: a file dropped from a set stays; the file put first is kept
tree; "$DUPSCAN" -rqj t > r.json
edit r.json 'd["matchSets"][0]["fileList"].pop(1); l=d["matchSets"][1]["fileList"]; l.reverse()'
run "$DUPSCAN" --from-report=r.json -dN
[ "$rc" = 0 ] && [ -e t/a ] && [ -e t/b ] && [ ! -e t/d/c ] && [ -e t/y ] && [ ! -e t/x ] &&
  ok "an edited report: the file dropped from it is untouched, the file moved first is kept" || not_ok "edited" "$out" "$err" "$(find t)"

# --keep applies to report sets
tree; touch -d '2001-01-01' t/d/c; "$DUPSCAN" -rqj t > r.json
run "$DUPSCAN" --from-report=r.json -dN --keep=oldest
[ -e t/d/c ] && [ ! -e t/a ] && [ ! -e t/b ] && ok "--keep=oldest chooses in a report's sets too" || not_ok "--keep" "$out" "$(find t)"

# changed since the report, its mtime put back: caught, skipped with the reason; the rest goes on
tree; "$DUPSCAN" -rqj t > r.json
cp t/u new; touch -r t/b new; cat new > t/b; touch -r new t/b
sum_b=$(sha1sum < t/b)
run "$DUPSCAN" --from-report=r.json -dN
[ "$rc" = 1 ] && [ "$(sha1sum < t/b)" = "$sum_b" ] && [ ! -e t/d/c ] && [ ! -e t/y ] && grep -q "t/b -- .*changed" <<< "$out" &&
  ok "a file rewritten after the report (mtime restored): skipped with the reason, the others done" || not_ok "changed" "$rc" "$out" "$err"

# a report claiming a different file belongs: its identity holds, the byte comparison refuses it
tree; "$DUPSCAN" -rqj t > r.json
edit r.json 'import os; st=os.stat("t/u"); d["matchSets"][0]["fileList"].append({"filePath": "t/u", "device": st.st_dev, "inode": st.st_ino, "mtimeNs": st.st_mtime_ns, "ctimeNs": st.st_ctime_ns})'
sum_u=$(sha1sum < t/u)
run "$DUPSCAN" --from-report=r.json -dN
[ "$rc" = 1 ] && [ "$(sha1sum < t/u)" = "$sum_u" ] && grep -q "t/u -- The contents differ" <<< "$out" && [ ! -e t/b ] &&
  ok "a file of other content put in a set: compared byte by byte and refused" || not_ok "differs" "$rc" "$out" "$err"
for act in -L -l -B "--move-to=$T/mv"; do
  tree; "$DUPSCAN" -rqj t > r.json
  edit r.json 'import os; st=os.stat("t/u"); d["matchSets"][0]["fileList"].append({"filePath": "t/u", "device": st.st_dev, "inode": st.st_ino, "mtimeNs": st.st_mtime_ns, "ctimeNs": st.st_ctime_ns})'
  sum_u=$(sha1sum < t/u)
  run "$DUPSCAN" --from-report=r.json $act
  [ -f t/u ] && [ ! -L t/u ] && [ "$(stat -c %h t/u)" = 1 ] && [ "$(sha1sum < t/u)" = "$sum_u" ] && grep -q "t/u.*The contents differ" <<< "$out$err" &&
    ok "$act refuses it too; u untouched" || not_ok "$act differs" "$rc" "$out" "$err"
done

# hard-linked names of unrelated contents in one set (rmlint #672): nothing lost
tree; rm -rf h; mkdir h
head -c 4000 /dev/urandom > h/x1; ln h/x1 h/x2; head -c 4000 /dev/urandom > h/y1; ln h/y1 h/y2
sum_x=$(sha1sum < h/x1); sum_y=$(sha1sum < h/y1)
python3 - > r.json <<'EOF'
import json, os
files = []
for p in ("h/x1", "h/x2", "h/y1", "h/y2"):
    st = os.stat(p)
    files.append({"filePath": p, "device": st.st_dev, "inode": st.st_ino, "mtimeNs": st.st_mtime_ns, "ctimeNs": st.st_ctime_ns})
print(json.dumps({"matchSets": [{"fileSize": 4000, "fileList": files}]}))
EOF
run "$DUPSCAN" --from-report=r.json -dN
{ [ -e h/x1 ] || [ -e h/x2 ]; } && { [ -e h/y1 ] || [ -e h/y2 ]; } &&
  [ "$(sha1sum < "$(ls h/x* | head -n 1)")" = "$sum_x" ] && [ "$(sha1sum < "$(ls h/y* | head -n 1)")" = "$sum_y" ] &&
  ok "hard-linked names of two contents in one set: both contents kept" || not_ok "hard links" "$rc" "$out" "$err" "$(ls -li h)"
run "$DUPSCAN" --from-report=r.json -dNH
[ -e h/x1 ] || [ -e h/x2 ] && { [ -e h/y1 ] || [ -e h/y2 ]; } && ok "and with -H, each name listed: still both kept" || not_ok "hard links -H" "$out" "$(ls -li h)"

# the reader takes a report as JSON, not as -j lays it out: keys in any order,
# members it does not use (nested values too) skipped, on stdin with "-"
tree; "$DUPSCAN" -rqj t > r.json
python3 - r.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
out = {"note": {"by": ["a", {"deep": [[[]]]}], "n": -1.5e3}, "matchSets": []}
for s in d["matchSets"]:
    files = [dict(reversed(list(f.items())), seen=None, tags=[True, False]) for f in s["fileList"]]
    out["matchSets"].append({"fileList": files, "extra": {"x": "\u00e9"}, "fileSize": s["fileSize"]})
out["z"] = 0
open(sys.argv[1], "w").write(json.dumps(out, indent=3))
PY
run "$DUPSCAN" --from-report=- -dN < r.json
[ "$rc" = 0 ] && [ -e t/a ] && [ ! -e t/b ] && [ ! -e t/d/c ] && [ -e t/x ] && [ ! -e t/y ] && [ -e t/u ] &&
  ok "a report rewritten (keys reordered, members added) and read from stdin: acted on the same" ||
  not_ok "reordered report on stdin" "$rc" "$out" "$err"

# reports that do not hold are refused whole, before anything changes
tree; "$DUPSCAN" -rqj t > good.json; before=$(snap)
refuse() {
  run "$DUPSCAN" --from-report="$1" -dN
  if [ "$rc" = 2 ] && printf '%s' "$err" | grep -Eq -- "$2" && grep -q "nothing was done" <<< "$err" && [ "$(snap)" = "$before" ]; then
    ok "$3: refused, status 2, nothing changed"
  else
    not_ok "$3" "$rc" "$out" "$err"
  fi
}
head -c 300 good.json > bad.json; refuse bad.json "not JSON" "a truncated report"
mkdir -p adir; refuse adir "'adir': $(errtext EISDIR); nothing was done" "a directory given as the report: the read's error, not 'not JSON'"
echo '{"sets": []}' > bad.json; refuse bad.json "no \"matchSets\"" "a report of another shape"
cp good.json bad.json; edit bad.json 'd["matchSets"][1]["fileList"].append(d["matchSets"][0]["fileList"][1])'; refuse bad.json "set 1 and set 2 both hold" "a path in two sets"
cp good.json bad.json; edit bad.json 'del d["matchSets"][0]["fileList"][0]["inode"]'; refuse bad.json "set 1: 't/a' has no device" "a file without its identity"
# one file by two names in two sets (a hard link of set 1's first file put
# in set 2): told by the library, where the filesystem keeps inode numbers
ln t/a t/hl; before=$(snap)
cp good.json bad.json
edit bad.json 'f = dict(d["matchSets"][0]["fileList"][0]); f["filePath"] = "t/hl"; d["matchSets"][1]["fileList"].append(f)'
refuse bad.json "t/(a|hl): One file \(the same device and inode\) in two sets of the report" "one file by two paths in two sets"
grep -q "one file (the same device and inode) in two sets; nothing was done" <<< "$err" &&
  ok "... said as the report's fault" || not_ok "two sets: the report named" "$err"
rm t/hl; before=$(snap)
# a key the reader uses, twice: which one a person meant is not known (JSON
# readers differ: Python's takes the last), so the report is refused
dupkey() { cp good.json bad.json; python3 - "$1" "$2" <<'PY'
import re, sys
s = open("bad.json").read()
key, val = sys.argv[1], sys.argv[2]
s = s.replace('"%s":' % key, '"%s": %s, "%s":' % (key, val, key), 1)
open("bad.json", "w").write(s)
PY
}
dupkey filePath '"t/u"'; refuse bad.json 'set 1, file 1: "filePath" twice' "a file's path given twice"
dupkey inode 1; refuse bad.json 'set 1, file 1: "inode" twice' "a file's inode given twice"
dupkey fileSize 5000; refuse bad.json 'set 1: "fileSize" twice' "a set's size given twice"
dupkey matchSets '[]'; refuse bad.json '"matchSets" twice' "two lists of sets"
mv t/y t/y.real; ln -s x t/y; before=$(snap)
refuse good.json "set 2: 't/y' is now a symlink" "a path swapped for a symlink to the kept file"
rm t/y; mv t/y.real t/y; mv t/d/c t/c.real; mkdir t/d/c; before=$(snap)
refuse good.json "set 1: 't/d/c' is now a directory" "a path that is now a directory"
rmdir t/d/c; mv t/c.real t/d/c

# a set a person left with one file, or none: "keep these"; the other sets are acted on
for left in 1 0; do
  tree; "$DUPSCAN" -rqj t > r.json
  if [ "$left" = 1 ]; then edit r.json 'd["matchSets"][1]["fileList"].pop()'
  else edit r.json 'd["matchSets"][1]["fileList"].clear()'; fi
  sum_x=$(sha1sum < t/x)
  run "$DUPSCAN" --from-report=r.json -dN
  [ "$rc" = 0 ] && [ "$(grep -c "fewer than two" <<< "$err")" = 1 ] && grep -qx "dupscan: --from-report 'r.json': set 2 has fewer than two files: kept as it is" <<< "$err" &&
    [ "$(sha1sum < t/x)" = "$sum_x" ] && [ "$(sha1sum < t/y)" = "$sum_x" ] && [ -e t/a ] && [ ! -e t/b ] && [ ! -e t/d/c ] &&
    ok "a set left with $left file(s): skipped with a one-line note, the other set acted on, status 0" ||
    not_ok "a set of $left" "$rc" "$out" "$err" "$(find t)"
done
# what is refused stays refused with a set of one beside it
tree; "$DUPSCAN" -rqj t > good.json; before=$(snap)
cp good.json bad.json; edit bad.json 'd["matchSets"][1]["fileList"].pop(); d["matchSets"][1]["fileList"].append(d["matchSets"][0]["fileList"][1])'
refuse bad.json "set 1 and set 2 both hold" "a set of one whose file is in another set too"
cp good.json bad.json; edit bad.json 'd["matchSets"][1]["fileList"].pop(); del d["matchSets"][1]["fileList"][0]["inode"]'
refuse bad.json "set 2: 't/x' has no device" "a set of one whose file has no identity"
run "$DUPSCAN" --from-report=good.json t
[ "$rc" = 2 ] && expect_err "paths with --from-report: usage error" "takes no paths"
run "$DUPSCAN" --from-report=good.json
[ "$rc" = 2 ] && expect_err "no action: usage error" "needs an action"

# --dry-run changes nothing; --undo reverses a run from a report
tree; "$DUPSCAN" -rqj t > r.json; before=$(snap)
run "$DUPSCAN" --from-report=r.json -dN --dry-run
[ "$rc" = 0 ] && [ "$(snap)" = "$before" ] && grep -q "\[-\] t/b" <<< "$out" && ok "--dry-run: says what it would do, changes nothing" || not_ok "dry-run" "$out"
run "$DUPSCAN" --from-report=r.json -L --journal=j.log
linked=$([ "$(stat -c %i t/b)" = "$(stat -c %i t/a)" ] && echo yes)
run "$DUPSCAN" --undo=j.log
[ "$linked" = yes ] && [ "$rc" = 0 ] && [ "$(snap)" = "$before" ] && [ "$(stat -c %h t/b)" = 1 ] &&
  ok "--undo after -L from a report: every file its own again" || not_ok "undo" "$rc" "$out" "$err" "$(snap)"
done_testing
