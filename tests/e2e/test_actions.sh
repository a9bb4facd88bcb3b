#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -d, -dN, -L, -l, -B and --dry-run on fresh trees: the tree afterwards, the same
# files kept and links made as jdupes, every content still present, and faults.
. "$(dirname "$0")/../fixtures/lib.sh"

# tree DIR: several sets, unique files, a hard-linked pair with a copy, nesting,
# names with spaces and a newline
tree() {
  rm -rf "$1"; mkdir -p "$1/a/sub" "$1/b/deep/er" "$1/c"
  ( cd "$1" || exit 1
    echo hello > a/x; cp a/x b/x; cp a/x "a/sub/with space"; cp a/x "b/deep/er/new
line"
    echo world > a/w; cp a/w b/w
    head -c 70000 /dev/zero | tr '\0' q > c/big1; cp c/big1 c/big2; cp c/big1 b/big3
    echo unique1 > a/u1; echo unique2 > b/u2
    echo linked > c/l1; ln c/l1 c/l1.hard; cp c/l1 b/l1copy )
}
# inventory DIR: one line per path: kind, inode group, link target, content digest
inventory() {
  python3 - "$1" <<'PY'
import hashlib, os, sys
root = sys.argv[1]
groups, out = {}, []
for d, dirs, files in os.walk(root):
    for n in sorted(files):
        p = os.path.join(d, n); st = os.lstat(p); rel = os.path.relpath(p, root)
        if os.path.islink(p):
            t = os.readlink(p)
            out.append(f"{rel!r}\tsymlink -> {t!r}\t" + hashlib.sha256(open(p, 'rb').read()).hexdigest()[:12])
        else:
            g = groups.setdefault((st.st_dev, st.st_ino), len(groups))
            out.append(f"{rel!r}\tfile inode#{g}\t" + hashlib.sha256(open(p, 'rb').read()).hexdigest()[:12])
print("\n".join(sorted(out)))
PY
}
contents() { inventory "$1" | cut -f3 | sort -u; }
paths() { inventory "$1" | cut -f1; }
# inode_groups DIR PATTERN: how many inodes the matching paths use
inode_groups() { inventory "$1" | grep -E "$2" | cut -f2 | sort -u | wc -l; }

check_tree() { # NAME DIR EXPECTED-INVENTORY
  local got; got=$(inventory "$2")
  [ "$got" = "$3" ] && ok "$1" || not_ok "$1" "$(diff <(echo "$3") <(echo "$got"))"
}
check_contents_kept() { # NAME DIR BEFORE
  local after; after=$(contents "$2")
  [ "$after" = "$3" ] && ok "$1: every content still present" || not_ok "$1: content lost" "$(diff <(echo "$3") <(echo "$after"))"
}
no_temps() { # NAME DIR
  local t; t=$(find "$2" -name '.dupscan-tmp-*')
  [ -z "$t" ] && ok "$1: no temporary file left" || not_ok "$1: temporary files left" "$t"
}

tree t; before=$(contents t); pristine=$(inventory t)

# --dry-run changes nothing, for every action
for act in -dN -L -l -B; do
  run "$DUPSCAN" -rq $act --dry-run t
  check_tree "$act --dry-run changes nothing" t "$pristine"
  case "$err" in *"--dry-run"*) ok "$act --dry-run says so" ;; *) not_ok "$act --dry-run says so" "$err" ;; esac
done
run "$DUPSCAN" -rdN --dry-run t
dry_out=$out

# -dN keeps the first file of each set
run "$DUPSCAN" -rdN t
[ "$rc" = 0 ] && ok "-dN status 0" || not_ok "-dN status" "$rc $err"
[ "$out" = "$dry_out" ] && ok "--dry-run printed what -dN then did" || not_ok "--dry-run output differs" "$(diff <(echo "$dry_out") <(echo "$out"))"
# (c/l1 and c/l1.hard are one inode, listed once as c/l1.hard, first in jdupes'
# order; c/l1 is not listed without -H, so it stays)
expected_dN=$(printf '%s\n' "'a/sub/with space'" "'a/u1'" "'a/w'" "'b/big3'" "'b/l1copy'" "'b/u2'" "'c/l1'")
got=$(paths t)
[ "$got" = "$expected_dN" ] && ok "-dN: the first of each set is what remains" || not_ok "-dN remaining paths" "$got"
check_contents_kept "-dN" t "$before"
first_lines=$(printf '%s' "$out" | head -5)
[ "$first_lines" = "$(printf '\n   [+] t/a/sub/with space\n   [-] t/a/x\n   [-] t/b/deep/er/new\nline')" ] && ok "-dN prints [+] and [-] as jdupes" || not_ok "-dN print format" "$first_lines"

# the same files kept as jdupes -dN, on a tree jdupes lists deterministically (no hard links)
if command -v jdupes >/dev/null; then
  for act in -dN -L -l; do
    tree t1; rm -f t1/c/l1.hard; rm -rf t2; cp -a t1 t2
    "$DUPSCAN" -rq $act t1 >/dev/null; jdupes -rq $act t2 >/dev/null 2>&1
    a=$(inventory t1); b=$(inventory t2)
    [ "$a" = "$b" ] && ok "$act leaves the tree jdupes $act leaves" || not_ok "$act differs from jdupes" "$(diff <(echo "$b") <(echo "$a"))"
  done
  rm -rf t1 t2
else
  ok "# SKIP jdupes not installed: no comparison"
fi

# -L: every duplicate (and every other name of its inode) becomes the first file's inode
tree t
run "$DUPSCAN" -rL t
[ "$rc" = 0 ] && ok "-L status 0" || not_ok "-L status" "$rc $err"
inv=$(inventory t)
[ "$(inode_groups t "^'(a/x|b/x|a/sub/with space|b/deep/er/new.*)'")" = 1 ] && ok "-L: a set shares one inode" || not_ok "-L: set not linked" "$inv"
[ "$(inode_groups t "^'(c/big1|c/big2|b/big3)'")" = 1 ] && ok "-L: another set shares one inode" || not_ok "-L: big set" "$inv"
[ "$(inode_groups t "^'(c/l1|c/l1.hard|b/l1copy)'")" = 1 ] && ok "-L: the other name of a hard-linked duplicate is relinked too" || not_ok "-L hard-linked names" "$inv"
[ "$(inode_groups t "^'(a/u1|b/u2)'")" = 2 ] && ok "-L: unique files untouched" || not_ok "-L uniques" "$inv"
check_contents_kept "-L" t "$before"
no_temps "-L" t
case "$out" in *"[SRC] t/a/sub/with space"*"----> t/a/x"*"[SRC] t/b/l1copy"*"----> t/c/l1.hard"*"----> t/c/l1"*) ok "-L arrows" ;; *) not_ok "-L arrows" "$out" ;; esac
run "$DUPSCAN" -rL t
[ -z "$out" ] && [ "$rc" = 0 ] && ok "-L twice: nothing left to do" || not_ok "-L twice" "$out"

# -l: relative symlinks that resolve to the first file
tree t
run "$DUPSCAN" -rl t
[ "$rc" = 0 ] && ok "-l status 0" || not_ok "-l status" "$rc $err"
[ "$(readlink t/b/x)" = "../a/sub/with space" ] && ok "-l relative target" || not_ok "-l relative target" "$(readlink t/b/x)"
[ "$(readlink "t/b/deep/er/new
line")" = "../../../a/sub/with space" ] && ok "-l target from a deeper directory" || not_ok "-l deep target" "$(readlink "t/b/deep/er/new
line")"
[ -f "t/a/sub/with space" ] && [ ! -L "t/a/sub/with space" ] && ok "-l keeps the first file a file" || not_ok "-l first file"
check_contents_kept "-l" t "$before"
no_temps "-l" t

# -d with answers on stdin
tree t
printf '2\nall\n' | "$DUPSCAN" -rd t > d.out 2>&1
[ -f t/a/x ] && [ ! -e t/b/x ] && [ ! -e "t/a/sub/with space" ] && [ ! -e "t/b/deep/er/new
line" ] && ok "-d keeps the chosen file of set 1" || not_ok "-d answer 2" "$(inventory t)"
[ -f t/a/w ] && [ -f t/b/w ] && ok "-d 'all' keeps the whole set" || not_ok "-d all" "$(inventory t)"
case "$(cat d.out)" in *"[1] t/a/sub/with space"*"Set 1 of 4: keep which files? (1 - 4, [a]ll, [h]elp): "*) ok "-d prompt text" ;; *) not_ok "-d prompt" "$(cat d.out)" ;; esac
[ -f t/c/big1 ] && [ -f t/c/big2 ] && ok "-d at the end of input keeps the remaining sets" || not_ok "-d EOF" "$(inventory t)"
tree t
printf 'h\n0\n9\nnone\n1 3\n' | "$DUPSCAN" -rd t > d.out 2>&1
[ -f "t/a/sub/with space" ] && [ -f "t/b/deep/er/new
line" ] && [ ! -e t/a/x ] && [ ! -e t/b/x ] && ok "-d: help, invalid answers asked again, '1 3' kept two" || not_ok "-d re-ask" "$(inventory t)"
grep -q "Invalid answer" d.out && grep -q "keeps every file" d.out && ok "-d explains invalid answers and help" || not_ok "-d messages" "$(cat d.out)"
tree t
"$DUPSCAN" -rd t < /dev/null > d.out 2>&1
check_tree "-d with stdin at its end deletes nothing" t "$pristine"
"$DUPSCAN" -rd t <&- > d.out 2>&1
check_tree "-d with stdin closed deletes nothing" t "$pristine"
# nothing changed: no journal made, none named
rm -rf "$XDG_STATE_HOME/dupscan"
"$DUPSCAN" -rd t <&- > d.out 2>&1
[ -z "$(ls -A "$XDG_STATE_HOME/dupscan" 2>/dev/null)" ] && ! grep -q "journal" d.out &&
  ok "-d with stdin closed: no journal written, none named" || not_ok "-d empty journal" "$(ls -la "$XDG_STATE_HOME/dupscan")" "$(cat d.out)"
"$DUPSCAN" -rdN --journal=explicit.journal t < /dev/null > d.out 2>&1
[ -s explicit.journal ] && [ "$(grep -c '^delete' explicit.journal)" -ge 1 ] && ! grep -q "journal of this run" d.out &&
  ok "--journal=FILE: made with the first change, not named again" || not_ok "explicit journal" "$(cat explicit.journal)" "$(cat d.out)"
tree t
# a --journal that cannot be made is refused before the scan (a slip in an
# argument: status 2)
run "$DUPSCAN" -rdN --journal="$T/no/such/dir/j" t
[ "$rc" = 2 ] && [ "$err" = "dupscan: --journal '$T/no/such/dir/j': $E_NOENT; nothing was changed" ] && [ -z "$out" ] &&
  check_tree "a journal that cannot be made: said first, nothing changed, status 2" t "$pristine" ||
  not_ok "unmakeable journal" "$rc" "$out" "$err"

# faults: the kept file modified while -d waits for its answer
tree t
mkfifo answer
( "$DUPSCAN" -rd t < answer > d.out 2>&1; echo "rc=$?" >> d.out ) &
exec 7> answer
wait_for d.out "Set 1 of 4: keep which files?"; echo changed >> "t/a/sub/with space"
printf '1\n1\n1\n1\n' >&7; exec 7>&-; wait
[ -f t/a/x ] && [ -f t/b/x ] && [ -f "t/b/deep/er/new
line" ] && ok "kept file changed after the scan: its set deletes nothing" || not_ok "changed kept file" "$(inventory t)"
[ ! -e t/b/w ] && ok "other sets still acted on" || not_ok "other sets" "$(inventory t)"
grep -q "\[!\] t/a/x -- File changed during the scan" d.out && grep -q "rc=1" d.out && ok "changed kept file reported, status 1" || not_ok "changed kept file report" "$(cat d.out)"
grep -q "dupscan: t/a/sub/with space: Changed since the scan: its size$" d.out && ok "... naming the kept file and what changed" || not_ok "changed kept file: which, what" "$(cat d.out)"
# a duplicate replaced by another file while waiting
tree t
( "$DUPSCAN" -rd t < answer > d.out 2>&1 ) &
exec 7> answer
wait_for d.out "Set 1 of 4: keep which files?"; echo "not the same" > t/b/x.new; mv t/b/x.new t/b/x
printf '1\n1\n1\n1\n' >&7; exec 7>&-; wait
[ "$(cat t/b/x)" = "not the same" ] && ok "a replaced duplicate is not deleted" || not_ok "replaced duplicate" "$(inventory t)"
grep -q "dupscan: t/b/x: Changed since the scan: its name leads to another file, or to none$" d.out && ok "... naming it and what changed" || not_ok "replaced duplicate: which, what" "$(cat d.out)"

# a duplicate deleted by someone else while waiting: that file is reported and
# skipped, the other sets are still offered and acted on
tree t
( "$DUPSCAN" -rd t < answer > d.out 2>&1; echo "rc=$?" >> d.out ) &
exec 7> answer
wait_for d.out "Set 1 of 4: keep which files?"; rm t/b/x
printf '1\n1\n1\n1\n' >&7; exec 7>&-; wait
grep -q "\[!\] t/b/x -- File changed during the scan" d.out && ! grep -q "stopping before the next change" d.out && ok "a vanished duplicate: reported as changed, the journal not blamed" || not_ok "vanished duplicate" "$(cat d.out)"
[ ! -e t/b/w ] && [ ! -e t/a/x ] && [ -f "t/a/sub/with space" ] && grep -q "rc=1" d.out && ok "a vanished duplicate: the other files and sets still acted on, status 1" || not_ok "vanished: rest" "$(inventory t)" "$(cat d.out)"

# -t: no re-check of the duplicate (the kept file must still exist)
tree t
( "$DUPSCAN" -rdt t < answer > d.out 2>&1 ) &
exec 7> answer
wait_for d.out "Set 1 of 4: keep which files?"; echo "rewritten" > t/b/x
printf '1\n1\n1\n1\n' >&7; exec 7>&-; wait
[ ! -e t/b/x ] && [ -f "t/a/sub/with space" ] && ok "-t: a changed duplicate is deleted without the re-check" || not_ok "-t" "$(inventory t)"
# SIGINT at the prompt: nothing more is deleted, status 1
tree t
"$DUPSCAN" -rd t < answer > d.out 2>&1 &
pid=$!
exec 7> answer
printf '1\n' >&7
wait_for d.out "Set 2 of 4: keep which files?"; kill -INT "$pid"
wait "$pid"; sigrc=$?; exec 7>&-
[ ! -e t/a/x ] && [ -f t/a/w ] && [ -f t/b/w ] && [ -f t/c/big1 ] && [ "$sigrc" = 1 ] && ok "SIGINT at the prompt: later sets untouched, status 1" || not_ok "SIGINT at the prompt" "status $sigrc" "$(inventory t)" "$(cat d.out)"

# a read-only directory: the replacement fails, the tree stays whole
tree t
if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 t; touch ro.journal; chown 65534 ro.journal; as=(setpriv --reuid=65534 --regid=65534 --clear-groups); else as=(); fi
chmod 555 t/b
pre=$(inventory t)
run "${as[@]}" "$DUPSCAN" -rL --journal="$T/ro.journal" t
chmod 755 t/b
[ "$rc" = 1 ] && ok "-L into a read-only directory: status 1" || not_ok "-L read-only status" "$rc"
case "$out" in *"-//-> t/b/x"*) ok "-L read-only: failure arrow" ;; *) not_ok "-L read-only arrow" "$out" ;; esac
case "$err" in *"unable to hard link 't/b/x'"*"$E_ACCES"*) ok "-L read-only: reason on stderr" ;; *) not_ok "-L read-only reason" "$err" ;; esac
[ "$(cat t/b/x)" = hello ] && [ ! -L t/b/x ] && ok "-L read-only: b/x untouched" || not_ok "-L read-only: b/x" "$(inventory t)"
check_contents_kept "-L read-only" t "$before"
no_temps "-L read-only" t

# a duplicate on another device cannot be hard linked
other=$(mktemp -d /dev/shm/dupscan-XXXXXX 2>/dev/null || true)
if [ -n "$other" ] && [ "$(stat -c %d "$other")" != "$(stat -c %d .)" ]; then
  echo crossdev > cd1; cp cd1 "$other/cd2"
  run "$DUPSCAN" -L cd1 "$other/cd2"
  [ "$rc" = 1 ] && [ -f "$other/cd2" ] && [ "$(stat -c %h "$other/cd2")" = 1 ] && ok "-L across devices: skipped, status 1" || not_ok "-L across devices" "$rc $out $err"
  # glibc says "Invalid cross-device link", musl "Cross-device link"
  grep -qi "cross-device link" <<< "$err" && ok "-L across devices: said why" || not_ok "-L across devices message" "$err"
  rm -rf "$other"
else
  [ -n "$other" ] && rm -rf "$other"
  ok "# SKIP cross-device: no second filesystem here"
fi

# -B where the filesystem cannot: said once, status 1, nothing changed
tree t
run "$DUPSCAN" -rB t
[ "$rc" = 1 ] && ok "-B unsupported: status 1" || ok "# SKIP -B unsupported: this filesystem supports it (status $rc)"
n=$(printf '%s' "$err" | grep -c "does not support deduplication")
[ "$n" -le 1 ] && ok "-B unsupported said at most once" || not_ok "-B said $n times" "$err"
check_tree "-B unsupported: tree unchanged" t "$pristine"

# a temporary name left by a killed run is reported, not scanned
tree t
ln t/a/x t/a/.dupscan-tmp-k1ll3d
run "$DUPSCAN" -r t
[ "$rc" = 1 ] && ok "leftover temporary name: status 1" || not_ok "leftover status" "$rc"
case "$err" in *"t/a/.dupscan-tmp-k1ll3d: Temporary name left by an interrupted dupscan action"*) ok "leftover temporary name reported" ;; *) not_ok "leftover report" "$err" ;; esac
case "$out" in *".dupscan-tmp-"*) not_ok "leftover listed as a duplicate" "$out" ;; *) ok "leftover not listed" ;; esac
rm t/a/.dupscan-tmp-k1ll3d

# refusals and warnings
expect "-TT with an action is refused" 2 "" "$DUPSCAN" -rTT -dN t
expect_err "-TT refusal explained" "refused with -d"
expect "-TT with --move-to is refused" 2 "" "$DUPSCAN" -rTT --move-to=mv t
expect_err "-TT refusal names --move-to" "refused with --move-to,"
expect "two actions" 2 "" "$DUPSCAN" -r -L -l t
expect_err "two actions named" "choose one action"
expect "--dry-run alone" 2 "" "$DUPSCAN" -r --dry-run t
expect_err "--dry-run names every action" "needs an action: -d, -L, -l, -B or --move-to"
check_tree "refusals changed nothing" t "$pristine"
run "$DUPSCAN" -rQ -dN --dry-run t
case "$err" in *"warning: -Q/--quick"*) ok "-Q with an action warns" ;; *) not_ok "-Q warning" "$err" ;; esac
done_testing
