#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --keep=RULE,...: which file of a set stays, listed first; rules as
# tie-breakers in order, then the set's order; --protect wins over them all.
. "$(dirname "$0")/../fixtures/lib.sh"

tree() {
  rm -rf k other; mkdir -p k/a k/b/deep/er other
  head -c 3000 /dev/urandom > k/a/x.jpg
  cp k/a/x.jpg k/b/deep/er/x.jpg; cp k/a/x.jpg k/c.jpg; cp k/a/x.jpg k/d.jpg
  touch -d '2001-01-01' k/a/x.jpg; touch -d '2010-01-01' k/b/deep/er/x.jpg
  touch -d '2005-01-01' k/c.jpg; touch -d '2003-01-01' k/d.jpg
  ln k/b/deep/er/x.jpg other/link   # two links, one outside the scan
}
tree
first() { "$DUPSCAN" -rq "$@" | head -n 1; }
[ "$(first k)" = k/a/x.jpg ] && ok "without --keep the set's first file is listed first" || not_ok "default" "$(first k)"
for case in "newest k/b/deep/er/x.jpg" "oldest k/a/x.jpg" "shortest-path k/c.jpg" "longest-path k/b/deep/er/x.jpg" \
            "deepest k/b/deep/er/x.jpg" "path=b/** k/b/deep/er/x.jpg" "most-links k/b/deep/er/x.jpg" \
            "shallowest,oldest k/d.jpg" "shallowest,newest k/c.jpg" "path=*.jpg,newest k/b/deep/er/x.jpg" \
            "path=*.png,oldest k/a/x.jpg" "path=nomatch k/a/x.jpg"; do
  rule=${case% *}; want=${case#* }
  got=$(first --keep="$rule" k)
  [ "$got" = "$want" ] && ok "--keep=$rule lists $want first" || not_ok "--keep=$rule" "got $got, want $want"
done
got=$(first --keep=shallowest --keep=oldest k)
[ "$got" = k/d.jpg ] && ok "--keep given twice: the rules add up in order" || not_ok "repeated --keep" "$got"
run "$DUPSCAN" -q --keep=arg-order k/d.jpg k/c.jpg k/a/x.jpg
[ "$(head -n 1 <<< "$out")" = k/d.jpg ] && ok "--keep=arg-order: the file from the first path argument" || not_ok "arg-order" "$out"
run "$DUPSCAN" -rq --keep=newest k
want=$(printf 'k/b/deep/er/x.jpg\nk/a/x.jpg\nk/c.jpg\nk/d.jpg')
[ "$out" = "$want" ] && ok "the kept file first, the others in the set's order" || not_ok "listing order" "$out"
run "$DUPSCAN" -rqf --keep=newest k
[ "$out" = "$(printf 'k/a/x.jpg\nk/c.jpg\nk/d.jpg')" ] && ok "-f leaves out the kept file" || not_ok "-f" "$out"
run "$DUPSCAN" -rqi --keep=path='*.jpg' k
[ "$(head -n 1 <<< "$out")" = k/d.jpg ] && ok "rules all tied: -i's order decides" || not_ok "-i tie" "$out"
run "$DUPSCAN" -rq -o time --keep=path='*.jpg' k
[ "$(head -n 1 <<< "$out")" = k/a/x.jpg ] && ok "rules all tied: -o time's order decides (oldest first)" || not_ok "-o tie" "$out"
run "$DUPSCAN" -rq --keep=biggest k
[ "$rc" = 2 ] && expect_err "an unknown rule: usage error naming it" "unknown rule 'biggest'"
run "$DUPSCAN" -rq --keep=newest,path= k
[ "$rc" = 2 ] && expect_err "path= without a glob: usage error" "unknown rule 'path='"

# JSON: the kept file first, each file with its identity as scanned
run "$DUPSCAN" -rqj --keep=newest k
kept=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["matchSets"][0]["fileList"][0]["filePath"])' <<< "$out")
[ "$kept" = k/b/deep/er/x.jpg ] && ok "-j lists the kept file first" || not_ok "-j order" "$out"
python3 - "$out" <<'EOF' && ok "-j: device, inode, mtimeNs and ctimeNs of each file as stat(2) gives them" || not_ok "-j identity" "$out"
import json, os, sys
for s in json.loads(sys.argv[1])["matchSets"]:
    for f in s["fileList"]:
        st = os.stat(f["filePath"])
        assert (f["device"], f["inode"], f["mtimeNs"], f["ctimeNs"]) == (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns), f
EOF

# the actions keep what is listed first
run "$DUPSCAN" -rdN --keep=newest k
[ -e k/b/deep/er/x.jpg ] && [ ! -e k/a/x.jpg ] && [ ! -e k/c.jpg ] && [ ! -e k/d.jpg ] && ok "-dN --keep=newest keeps the newest" || not_ok "-dN" "$out" "$(find k)"
tree
run "$DUPSCAN" -rL --keep=shortest-path k
ino=$(stat -c %i k/c.jpg)
[ "$rc" = 0 ] && [ "$(stat -c %i k/a/x.jpg)" = "$ino" ] && [ "$(stat -c %i k/d.jpg)" = "$ino" ] && [ "$(stat -c %i k/b/deep/er/x.jpg)" = "$ino" ] &&
  ok "-L --keep=shortest-path links the others to k/c.jpg" || not_ok "-L" "$out" "$err"
tree
run "$DUPSCAN" -rl --keep=oldest k
[ -f k/a/x.jpg ] && [ ! -L k/a/x.jpg ] && [ -L k/c.jpg ] && [ "$(readlink -f k/c.jpg)" = "$(readlink -f k/a/x.jpg)" ] && ok "-l --keep=oldest" || not_ok "-l" "$out"
tree
run "$DUPSCAN" -r --move-to="$T/moved" --keep=deepest k
[ -e k/b/deep/er/x.jpg ] && [ ! -e k/c.jpg ] && [ -e "$T/moved/c.jpg" ] && ok "--move-to --keep=deepest moves the others" || not_ok "--move-to" "$out" "$(find "$T/moved" k)"
tree
run "$DUPSCAN" -rdN --keep=newest --protect=k/a k
[ -e k/a/x.jpg ] && [ ! -e k/b/deep/er/x.jpg ] && [ ! -e k/c.jpg ] && ok "--protect wins over --keep (newest would keep another)" || not_ok "protect" "$out" "$(find k)"
tree
run "$DUPSCAN" -rq --keep=newest --protect=k/a --protect=k/c.jpg k
[ "$(head -n 1 <<< "$out")" = k/c.jpg ] && ok "among protected files the rules choose (newest of a/x.jpg and c.jpg)" || not_ok "protect+rules" "$out"
# the prompt shows the rules' choice; an empty answer keeps it
out=$(printf '\n' | "$DUPSCAN" -rd --keep=newest k 2>&1)
grep -q "Enter alone keeps \[2\] (chosen by --keep)" <<< "$out" && [ -e k/b/deep/er/x.jpg ] && [ ! -e k/a/x.jpg ] && [ ! -e k/c.jpg ] &&
  ok "-d: the prompt pre-selects the rules' choice, an empty answer keeps it" || not_ok "prompt" "$out" "$(find k)"
tree
out=$(printf '\n1\n' | "$DUPSCAN" -rd k 2>&1)
grep -q "Invalid answer" <<< "$out" && [ -e k/a/x.jpg ] && [ ! -e k/c.jpg ] && ok "-d without --keep: an empty answer is asked again" || not_ok "prompt without keep" "$out"
done_testing
