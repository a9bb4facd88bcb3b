#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --move-to, the journal, --undo and --prune-empty-dirs: moves within and across
# filesystems, never overwriting, an interrupted move, and undo after -L, -l and
# --move-to giving back the tree as it was (paths, contents, metadata, inodes).
. "$(dirname "$0")/../fixtures/lib.sh"

# tree DIR: sets across directories, a hard-linked pair, modes and times that
# differ between copies, a directory that moving empties
tree() {
  rm -rf "$1"; mkdir -p "$1/a/sub" "$1/b/only" "$1/c"
  ( cd "$1" || exit 1
    echo hello > a/x; cp a/x b/x; cp a/x "a/sub/with space"
    echo world > a/w; cp a/w b/only/w
    head -c 300000 /dev/urandom > c/big1; cp c/big1 c/big2
    echo linked > c/l1; ln c/l1 c/l1.hard; cp c/l1 b/l1copy
    echo unique > a/u
    chmod 600 b/x; chmod 755 "a/sub/with space" # (readable by all who may read its copies: -d, --move-to keep to that)
    touch -d '2001-02-03 04:05:06.123456789' b/x; touch -d '1999-12-31 23:59:59' c/big2 )
}
moved_ok() { # NAME: every content of the pre-run tree is under t or the move target
  local missing
  missing=$(comm -23 <(echo "$before_contents") <(cat <(find t mv -type f -exec sha256sum {} + 2>/dev/null | cut -c1-64) | sort -u))
  [ -z "$missing" ] && ok "$1: every content still present" || not_ok "$1: contents lost" "$missing"
}

# ---- move within one filesystem ----
tree t
before=$(snapshot t); before_contents=$(find t -type f -exec sha256sum {} + | cut -c1-64 | sort -u)
run "$DUPSCAN" -rq --move-to=mv --journal=j1 t
want="
   [+] t/a/sub/with space
   [>] t/a/x -> mv/a/x
   [>] t/b/x -> mv/b/x

   [+] t/a/w
   [>] t/b/only/w -> mv/b/only/w

   [+] t/b/l1copy
   [>] t/c/l1.hard -> mv/c/l1.hard
   [>] t/c/l1 -> mv/c/l1

   [+] t/c/big1
   [>] t/c/big2 -> mv/c/big2"
[ "$rc" = 0 ] && [ "$out" = "$want" ] && ok "--move-to: moves every duplicate but the kept one" || not_ok "--move-to output" "rc $rc" "$out" "--- want" "$want" "$err"
[ -f mv/b/x ] && [ ! -e t/b/x ] && [ "$(cat mv/b/x)" = hello ] && ok "--move-to: recreates the path below the argument" || not_ok "--move-to: paths" "$(find t mv | sort)"
[ "$(stat -c %a mv/b/x)" = 600 ] && [ "$(stat -c %Y mv/b/x)" = "$(date -d '2001-02-03 04:05:06' +%s)" ] && ok "--move-to: mode and time kept" || not_ok "--move-to: metadata" "$(stat mv/b/x)"
[ "$(stat -c %i mv/c/l1)" = "$(stat -c %i mv/c/l1.hard)" ] && ok "--move-to: every name of a duplicate inode moves, still one inode" || not_ok "l1.hard" "$(ls -li mv/c)"
moved_ok "--move-to"
# a rename moves the inode itself: no content recorded ("-", "-"), nothing read for it
grep -Eq "^move	$T/t/b/x	$T/mv/b/x	$(stat -c %d mv/b/x)	$(stat -c %i mv/b/x)	-	-$" j1 && head -1 j1 | grep -qx '# dupscan journal 1' && ok "journal: header and one absolute line per move" || not_ok "journal lines" "$(cat j1)"

run "$DUPSCAN" --undo=j1
[ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && ok "--undo after --move-to: tree exactly as before" || not_ok "--undo after --move-to" "rc $rc $err" "$(diff <(echo "$before") <(snapshot t))"
run "$DUPSCAN" --undo=j1
[ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && printf '%s' "$out" | grep -q "skipped $T/t/b/x -- already in place" && ok "--undo twice: the second changes nothing" || not_ok "--undo twice" "$rc" "$out" "$err"

# ---- never overwrite: a name taken in the target keeps both ----
tree t; rm -rf mv; mkdir -p mv/b; echo "not a duplicate" > mv/b/x
run "$DUPSCAN" -rq --move-to=mv --journal=j2 t
[ "$(cat mv/b/x)" = "not a duplicate" ] && [ "$(cat mv/b/x.1)" = hello ] && [ ! -e t/b/x ] && ok "--move-to: a taken name gets .1; both kept" || not_ok "--move-to taken name" "$out" "$(ls -la mv/b)"
printf '%s' "$out" | grep -qF "[>] t/b/x -> mv/b/x.1" && ok "--move-to: says where it went" || not_ok "--move-to names .1" "$out"
run "$DUPSCAN" --undo=j2
[ "$(cat mv/b/x)" = "not a duplicate" ] && [ "$(cat t/b/x)" = hello ] && [ ! -e mv/b/x.1 ] && ok "--undo: moves back from .1, leaves the other file" || not_ok "--undo .1" "$out $err"

# ---- --prune-empty-dirs, never the argument ----
tree t; rm -rf mv
mkdir -p t2/deep/er; cp t/a/x t2/deep/er/x
run "$DUPSCAN" -rq --move-to=mv --prune-empty-dirs --journal=j3 t t2
[ ! -e t/b/only ] && [ -d t/b ] && [ ! -e t2/deep ] && [ -d t2 ] && ok "--prune-empty-dirs: emptied directories gone, arguments stay" || not_ok "--prune-empty-dirs" "$(find t t2 -type d | sort)" "$out"
[ -d t/a/sub ] && ok "--prune-empty-dirs: a directory still holding a file stays" || not_ok "prune kept non-empty"
printf '%s' "$out" | grep -qF "   [-] t2/deep/er/" && ok "--prune-empty-dirs: each removal shown" || not_ok "prune output" "$out"
run "$DUPSCAN" --undo=j3
[ -d t/b/only ] && [ -f t2/deep/er/x ] && [ -f t/b/only/w ] && ok "--undo recreates pruned directories and moves back" || not_ok "undo prune" "$out" "$err" "$(find t t2 | sort)"
run "$DUPSCAN" -r --prune-empty-dirs t
[ "$rc" = 2 ] && expect_err "--prune-empty-dirs without -d or --move-to: usage error" "needs -d or --move-to"

# ---- prompted -d keeps the journal too: deletions cannot be undone ----
tree t
printf '1\n1\n1\n1\n' | "$DUPSCAN" -rdq --journal=j4 t > /dev/null
run "$DUPSCAN" --undo=j4
[ "$rc" = 1 ] && expect_err "--undo after -d: says deletions cannot be undone, status 1" "t/b/x: was deleted \(without --move-to\): cannot be undone"

# ---- undo after -L and -l: own copies back, distinct inodes, hard links as they were ----
for act in -L -l; do
  tree t; before=$(snapshot t)
  "$DUPSCAN" -rq $act --journal=jl t > /dev/null 2>&1
  [ "$(snapshot t)" != "$before" ] || not_ok "$act changed nothing"
  run "$DUPSCAN" --undo=jl
  [ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && ok "--undo after $act: paths, contents, modes, times and inodes as before" || not_ok "--undo after $act" "rc $rc" "$err" "$(diff <(echo "$before") <(snapshot t))"
  rm -f jl
done

# a kept twin that changed since: refuse to restore from it
tree t; "$DUPSCAN" -rqL --journal=jc t > /dev/null 2>&1
echo changed >> t/a/x
run "$DUPSCAN" --undo=jc
[ "$rc" = 1 ] && [ "$(cat t/b/x)" = "$(cat t/a/x)" ] && expect_err "--undo: kept twin changed since: refused, status 1" "kept twin changed since"

# the default journal lands under XDG_STATE_HOME and is named on stderr
tree t; rm -rf mv
run "$DUPSCAN" -rq --move-to=mv t
j=$(printf '%s' "$err" | sed -n 's/^dupscan: journal of this run: \(.*\) (dupscan --undo=FILE reverses it)$/\1/p')
[ -n "$j" ] && [ -f "$j" ] && case "$j" in "$XDG_STATE_HOME"/dupscan/journal-*) true ;; *) false ;; esac && ok "default journal under \$XDG_STATE_HOME/dupscan, named on stderr" || not_ok "default journal" "$err"
run "$DUPSCAN" --undo="$j"
[ "$rc" = 0 ] && [ -f t/b/x ] && ok "--undo of the default journal" || not_ok "undo default" "$err"
rm -rf mv
"$DUPSCAN" -rq --move-to=mv --dry-run t > /dev/null 2>&1
[ "$(ls "$XDG_STATE_HOME/dupscan" | wc -l)" = 1 ] && [ ! -e mv ] && ok "--dry-run writes no journal and moves nothing" || not_ok "dry-run journal" "$(ls "$XDG_STATE_HOME/dupscan")"

# a journal that cannot be written: nothing is changed
tree t; before=$(snapshot t); rm -rf mv
run "$DUPSCAN" -rqL --journal=/nonexistent/dir/j t
[ "$rc" = 1 ] && [ "$(snapshot t)" = "$before" ] && expect_err "unwritable journal: nothing changed, status 1" "journal '/nonexistent/dir/j'"
# bad journals for --undo
run "$DUPSCAN" --undo=/nonexistent
[ "$rc" = 2 ] && expect_err "--undo of a missing file: status 2, named" "--undo: '/nonexistent'"
printf 'hello\n' > notj
run "$DUPSCAN" --undo=notj
[ "$rc" = 2 ] && expect_err "--undo of a non-journal: status 2" "is not a dupscan journal"
printf '# dupscan journal 1\nmove\t/a\\q\t/b\n' > badj
run "$DUPSCAN" --undo=badj
[ "$rc" = 2 ] && expect_err "--undo of a malformed line: status 2, nothing undone" "line 2: malformed"
run "$DUPSCAN" --undo=j1 t
[ "$rc" = 2 ] && expect_err "--undo with paths: usage error" "takes no paths"
run "$DUPSCAN" -rq --move-to=mv -L t
[ "$rc" = 2 ] && expect_err "--move-to with -L: one action only" "choose one action: --move-to and -L"

# ---- across filesystems: copy, fsync, compare, then unlink ----
other=""
for cand in /dev/shm "${TMPDIR:-/tmp}"; do
  if [ -d "$cand" ] && [ -w "$cand" ] && [ "$(stat -c %d "$cand")" != "$(stat -c %d "$T")" ]; then other=$cand; break; fi
done
if [ -n "$other" ]; then
  X=$(mktemp -d "$other/dupscan-mv-XXXXXX")
  tree t; before=$(snapshot t)
  run "$DUPSCAN" -rq --move-to="$X/mv" --journal=jx t
  [ "$rc" = 0 ] && [ "$(cat "$X/mv/b/x")" = hello ] && [ ! -e t/b/x ] && cmp -s "$X/mv/c/big2" t/c/big1 && ok "--move-to across filesystems: copied whole, source removed" || not_ok "cross-fs move" "$out" "$err"
  [ "$(stat -c %a "$X/mv/b/x")" = 600 ] && [ "$(stat -c %Y "$X/mv/b/x")" = "$(date -d '2001-02-03 04:05:06' +%s)" ] && ok "--move-to across filesystems: mode and mtime kept" || not_ok "cross-fs metadata" "$(stat "$X/mv/b/x")"
  [ -z "$(find "$X" -name '.dupscan-tmp-*')" ] && ok "--move-to across filesystems: no temporary left" || not_ok "cross-fs temps" "$(find "$X")"
  # a copy records the content moved: size and XXH64, as --undo checks it
  grep -P "^move\t$T/t/b/x\t" jx | cut -f6,7 | grep -qP '^6\t[0-9a-f]{16}$' \
    && ok "journal: a move across filesystems records the size and hash moved" || not_ok "cross-fs journal content" "$(cat jx)"
  run "$DUPSCAN" --undo=jx
  [ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && ok "--undo of a move across filesystems: tree as before" || not_ok "cross-fs undo" "$err" "$(diff <(echo "$before") <(snapshot t))"
  # a moved copy changed since (same size): not put back, said, left where it is
  tree t; rm -rf "$X/mv"
  run "$DUPSCAN" -rq --move-to="$X/mv" --journal=jy t
  printf 'HELLO\n' > "$X/mv/b/x"
  run "$DUPSCAN" --undo=jy
  [ "$rc" = 1 ] && [ ! -e t/b/x ] && [ "$(cat "$X/mv/b/x")" = HELLO ] && [ -f t/c/big2 ] \
    && expect_err "--undo: a moved copy changed since is refused, named, left in place" "t/b/x: its moved copy holds other content than the journal recorded; left at $X/mv/b/x" \
    || not_ok "changed moved copy" "status $rc" "$out" "$err"
  # killed between the verified copy and the unlink of the original (set
  # aside under a temporary name in its directory, checked there): both copies left
  if [ -n "${FAULT_LIB:-}" ]; then
    tree t; rm -rf "$X/mv"
    DUPSCAN_FAULT="unlink:t/b/.dupscan-tmp-:KILL" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --move-to="$X/mv" --journal=jk t > /dev/null 2>&1; krc=$?
    left=$(find t/b -maxdepth 1 -name '.dupscan-tmp-*')
    [ "$krc" = 137 ] && [ -n "$left" ] && [ "$(cat "$left")" = hello ] && [ "$(cat "$X/mv/b/x")" = hello ] && ok "killed between copy and unlink: both copies left" || not_ok "killed move" "status $krc" "$(find t "$X" | sort)"
    run "$DUPSCAN" --undo=jk
    [ "$rc" = 0 ] && [ "$(cat t/b/x)" = hello ] && printf '%s' "$out" | grep -q "restored $T/t/b/x" && ok "--undo after a killed move: the original is back at its name" || not_ok "undo killed" "$out $err"
    run "$DUPSCAN" -rq t
    [ "$rc" = 1 ] && expect_err "the set-aside copy is reported by the next scan" "dupscan-tmp-.*left by an interrupted action|interrupted"
    # killed while it copies (its first write into the destination): the
    # copy is an unnamed file until complete, so nothing is left there
    tree t; rm -rf "$X/mv"
    DUPSCAN_FAULT="write:$X/mv/:KILL" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --move-to="$X/mv" --journal=jw t > /dev/null 2>&1; krc=$?
    [ "$krc" = 137 ] && [ -z "$(find "$X/mv" -type f 2>/dev/null)" ] && [ "$(cat t/b/x)" = hello ] &&
      ok "killed while copying across filesystems: no partial copy left, the original in place" ||
      not_ok "killed mid-copy" "status $krc" "$(find "$X/mv" -type f 2>/dev/null)"
  fi
  rm -rf "$X"
else
  echo "# skipped: no second filesystem here for a cross-device move"
fi
done_testing
