#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Where inode numbers lie. A FUSE passthrough (tests/tools/passfs.c) serves a
# tree holding two filesystems (two tmpfs, whose numbers repeat: both roots
# are 1, and files made in the same order have one number) with the server's
# numbers, as use_ino does; and as sshfs shows a tree (numbers in the order
# of lookups, the ctime the mtime in whole seconds). Then sshfs itself,
# through the test's own sshd, where sshd and sshfs are here. The listings
# must equal a listing of the server's own tree; actions lose nothing; a
# trusted cache lists no set of files that differ after a remount.
. "$(dirname "$0")/../fixtures/lib.sh"
skip() { echo "ok 1 # SKIP $1"; echo "1..1"; exit 0; }
[ -n "${PASSFS:-}" ] && [ -x "$PASSFS" ] || skip "no FUSE passthrough built (libfuse3-dev)"
[ "$(id -u)" = 0 ] && [ -c /dev/fuse ] || skip "mounting needs root and /dev/fuse"
SRV="$T/srv" M="$T/mnt"
mkdir -p "$SRV" "$M"
cleanup() {
  stop_sshd 2>/dev/null; umount "$M" 2>/dev/null; umount "$SRV/other" 2>/dev/null; umount "$SRV" 2>/dev/null
  chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"
}
trap cleanup EXIT
# mktree: two fresh tmpfs, the same layout made in the same order on both
# (so their files have the same numbers): contents alike across them, within
# one of them, and (b) one number and different bytes; every time in 2020,
# older than any scan (a proof of the cache holds)
mktree() {
  local fs i
  umount "$M" 2>/dev/null; umount "$SRV/other" 2>/dev/null; umount "$SRV" 2>/dev/null
  mount -t tmpfs -o mode=755 tmpfs "$SRV" && mkdir "$SRV/other" && mount -t tmpfs -o mode=755 tmpfs "$SRV/other" || return 1
  mkdir "$SRV/other/.pad" # the number "other" took on the first
  for fs in "$SRV" "$SRV/other"; do
    for i in 1 2 3 4; do
      mk "$fs/d$i/a" "alpha $i"
      mk "$fs/d$i/b" "beta $i on $(basename "$fs")"
      mk "$fs/d$i/c" "gamma $i $(basename "$fs")"
      mk "$fs/d$i/sub/c" "gamma $i $(basename "$fs")"
    done
  done
  find "$SRV" -exec touch -h -d '2020-01-01 00:00:00' {} +
}
serve() { umount "$M" 2>/dev/null; "$PASSFS" "$@" "$SRV" "$M" || { echo "# passfs $* failed"; return 1; }; }
mktree || skip "tmpfs cannot be mounted here"
# sets: a listing with paths under $1 shown under $2, each set sorted, the sets sorted
sets() {
  python3 -c '
import sys
a, b = sys.argv[1], sys.argv[2]
text = sys.stdin.read().replace(a, b)
sets = sorted(" ".join(sorted(s.split("\n"))) for s in text.strip("\n").split("\n\n") if s.strip())
print("\n".join(sets))' "$1" "$2"
}
# contents DIR...: every content of a file under them, once
contents() { find "$@" -type f -exec cat {} \; -exec echo \; | sort -u; }

serve || skip "passfs could not mount (FUSE refused here)"
want=$("$DUPSCAN" -r "$SRV" | sets "$SRV" "$M")
nsets=$(printf '%s\n' "$want" | grep -c .)
[ "$nsets" -eq 12 ] && ok "the server's tree: 12 sets" || not_ok "the server's tree: 12 sets" "$want"
[ "$(stat -c %i "$M")" = "$(stat -c %i "$M/other")" ] && [ "$(stat -c %i "$M/d1/a")" = "$(stat -c %i "$M/other/d1/a")" ] &&
  ok "the mount shows repeated numbers (both roots $(stat -c %i "$M"))" || not_ok "repeated numbers on the mount"
for io in auto ssd net hdd; do
  for th in 1 8; do
    got=$("$DUPSCAN" -r --io=$io --threads=$th "$M" | sets "$M" "$M")
    [ "$got" = "$want" ] && ok "--io=$io --threads=$th: the server's sets, none skipped or merged" ||
      not_ok "--io=$io --threads=$th: the server's sets" "$(diff <(echo "$want") <(echo "$got"))"
  done
done
got=$("$DUPSCAN" -r "$M/other" "$M" "$M/d1" | sets "$M" "$M")
[ "$got" = "$want" ] && ok "arguments inside one another: each directory walked once" ||
  not_ok "arguments inside one another" "$(diff <(echo "$want") <(echo "$got"))"
# -s: a symlink loop on the server, and a second way into a directory
ln -s .. "$SRV/d1/up"; ln -s ../other/d2 "$SRV/d3/to-other-d2"
got=$(timeout 60 "$DUPSCAN" -rs "$M" | sets "$M" "$M")
[ "$got" = "$want" ] && ok "-s: a loop and a second way in followed once, by the real path" ||
  not_ok "-s over the mount" "$(diff <(echo "$want") <(echo "$got"))"
rm "$SRV/d1/up" "$SRV/d3/to-other-d2"

# --protect by its real path: MNT/other protected, MNT (the same number) not
before=$(contents "$SRV")
run "$DUPSCAN" -rdN --protect="$M/other" "$M"
[ "$(contents "$SRV")" = "$before" ] && [ "$(find "$SRV/other" -type f | wc -l)" = 16 ] &&
  ok "-dN --protect=MNT/other: nothing under it removed, no content lost" || not_ok "-dN --protect" "$out" "$err"
# the pairs whose numbers repeat are refused (may be one file); the others go
c=$(find "$SRV/d1" -name c | wc -l)
[ "$c" = 1 ] && [ -e "$SRV/d1/a" ] && grep -q "\[!\] $M/d1/a -- One inode number" <<< "$out" &&
  ok "-dN: a copy on the unprotected side removed; a pair of one number refused, named" ||
  not_ok "-dN removed the unprotected copies" "$c copies of d1/c left" "$out" "$err"

# a report of the mount: files of one number in two of its sets are two
# files there, not a report that holds one file twice
mktree && serve
"$DUPSCAN" -rqj "$M" > "$T/r.json"
before=$(contents "$SRV")
run "$DUPSCAN" --from-report="$T/r.json" -dN
[ "$rc" != 2 ] && [ "$(contents "$SRV")" = "$before" ] && [ "$(find "$SRV/other/d2" -name c | wc -l)" = 1 ] &&
  ok "--from-report -dN on the mount: acted on, no content lost" || not_ok "--from-report on the mount" "rc $rc" "$out" "$err"

# -dN, --move-to and -L lose nothing
for act in -dN --move-to=$T/moved -L; do
  mktree && serve; rm -rf "$T/moved"
  before=$(contents "$SRV")
  run "$DUPSCAN" -r $act "$M"
  after=$(mkdir -p "$T/moved" && contents "$SRV" "$T/moved")
  [ "$before" = "$after" ] && ok "$act on the mount: every content still there" ||
    not_ok "$act lost a content" "$(diff <(echo "$before") <(echo "$after"))" "$err"
done
# -L says once why nothing is linked there, and links nothing
n=$(grep -c "not hard linking on the filesystem of" <<< "$err")
[ "$n" = 1 ] && grep -q "duplicates not hard linked where inode numbers are not kept" <<< "$err" && [ "$rc" = 1 ] &&
  ok "-L: said once that links cannot be checked there, and how many were left" || not_ok "-L said once" "rc $rc" "$err"
[ "$(find "$SRV" -type f -links +1 | wc -l)" = 0 ] && ok "-L: no link made there" || not_ok "-L made links"

# a move into the mount, which has no O_TMPFILE, killed while it copies:
# the copy's temporary name is derived from its destination's, which the
# journal names; --undo removes it, and so does the next copy to that name
if [ -n "${FAULT_LIB:-}" ]; then
  mktree && serve
  rm -rf "$T/src" && mkdir -p "$T/src" && echo copied > "$T/src/a" && cp "$T/src/a" "$T/src/b"
  DUPSCAN_FAULT="write:$M/moved/:KILL" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --move-to="$M/moved" --journal="$T/jm" "$T/src" >/dev/null 2>&1
  krc=$?
  left=$(find "$SRV/moved" -name '.dupscan-tmp-*' 2>/dev/null)
  [ "$krc" = 137 ] && [ "$(wc -l <<< "$left")" = 1 ] && [ -n "$left" ] && [ "$(cat "$T/src/b")" = copied ] &&
    ok "killed copying into a filesystem without O_TMPFILE: one temporary copy, the original in place" ||
    not_ok "killed copy into the mount" "status $krc" "$left"
  run "$DUPSCAN" --undo="$T/jm"
  [ -z "$(find "$SRV/moved" -name '.dupscan-tmp-*')" ] && grep -q "removed $M/moved/b" <<< "$out" &&
    ok "--undo removes the partial copy, named" || not_ok "--undo of the killed copy" "rc $rc" "$out" "$err"
  DUPSCAN_FAULT="write:$M/moved/:KILL" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --move-to="$M/moved" --journal="$T/jm2" "$T/src" >/dev/null 2>&1
  run "$DUPSCAN" -rq --move-to="$M/moved" --journal="$T/jm3" "$T/src"
  [ "$rc" = 0 ] && [ -z "$(find "$SRV/moved" -name '.dupscan-tmp-*')" ] && [ "$(cat "$SRV/moved/b")" = copied ] && [ ! -e "$T/src/b" ] &&
    ok "the next move to that name removes the partial copy and moves" || not_ok "the next move" "rc $rc" "$out" "$err" "$(find "$SRV/moved")"
fi

# --cache-trust after a remount: as sshfs shows it (numbers in lookup order,
# ctime = mtime), a copy rewritten at its size with its mtime put back keeps
# its key; it must be read, not trusted
mktree && serve --sftp
C="$T/cache"
run "$DUPSCAN" -rq --cache="$C" "$M"
run "$DUPSCAN" -rq --cache="$C" --cache-trust "$M"
first=$out
# "alpha 2" rewritten in place, its mtime put back
touch -r "$SRV/d2/a" "$T/ref" && printf 'ALPHA 2' | dd of="$SRV/d2/a" conv=notrunc status=none && touch -r "$T/ref" "$SRV/d2/a"
serve --sftp
run "$DUPSCAN" -r --cache="$C" --cache-trust "$M"
grep -q "$M/d2/a" <<< "$first" && ! grep -q "$M/d2/a" <<< "$out" &&
  ok "--cache-trust after a remount and a same-size rewrite: no stale set" ||
  not_ok "--cache-trust listed a stale set" "$out"
run "$DUPSCAN" -r "$M"
got=$(sets "$M" "$M" <<< "$out"); want=$("$DUPSCAN" -r "$SRV" | sets "$SRV" "$M")
[ "$got" = "$want" ] && ok "as sshfs shows it: the server's sets" || not_ok "sftp-like mount: sets" "$(diff <(echo "$want") <(echo "$got"))"
# a report acted on after a remount that numbered every file anew (looked
# up in the other order): the numbers say nothing there, the contents do
"$DUPSCAN" -rqj "$M" > "$T/r2.json"
serve --sftp
find "$M" -type f | sort -r | xargs stat -c %i > "$T/renumbered"
before=$(contents "$SRV")
run "$DUPSCAN" --from-report="$T/r2.json" -dN
[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matchSets"][0]["fileList"][0]["inode"])' "$T/r2.json")" != \
  "$(stat -c %i "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["matchSets"][0]["fileList"][0]["filePath"])' "$T/r2.json")")" ] &&
  ok "the remount numbered the report's files anew" || not_ok "renumbered by the remount"
[ "$rc" = 0 ] && ! grep -q "Changed since the scan" <<< "$out$err" && [ "$(contents "$SRV")" = "$before" ] &&
  [ "$(find "$SRV/d3" -name c | wc -l)" = 1 ] &&
  ok "--from-report -dN after renumbering: acted on, no content lost" || not_ok "--from-report after renumbering" "rc $rc" "$out" "$err"
umount "$M"

# ---- sshfs through the test's own sshd ----
command -v sshfs >/dev/null || { ok "# SKIP sshfs not installed"; done_testing; }
start_sshd || { ok "# SKIP $SSHD_WHY"; done_testing; }
mktree
mount_sshfs() { sshfs -o "ssh_command=$SSH_CMD" "$SSH_HOST:$SRV" "$M"; }
mount_sshfs || { ok "# SKIP sshfs would not mount"; done_testing; }
got=$("$DUPSCAN" -r "$M" | sets "$M" "$M"); want=$("$DUPSCAN" -r "$SRV" | sets "$SRV" "$M")
[ "$got" = "$want" ] && ok "sshfs: the server's sets" || not_ok "sshfs: the server's sets" "$(diff <(echo "$want") <(echo "$got"))"
run "$DUPSCAN" -rq --cache="$T/cache2" "$M"
run "$DUPSCAN" -rq --cache="$T/cache2" --cache-trust "$M"
first=$out
umount "$M"
touch -r "$SRV/d3/a" "$T/ref" && printf 'ALPHA 3' | dd of="$SRV/d3/a" conv=notrunc status=none && touch -r "$T/ref" "$SRV/d3/a"
mount_sshfs
run "$DUPSCAN" -r --cache="$T/cache2" --cache-trust "$M"
grep -q "$M/d3/a" <<< "$first" && ! grep -q "$M/d3/a" <<< "$out" &&
  ok "sshfs: --cache-trust after a remount and a same-size rewrite: no stale set" || not_ok "sshfs: stale set" "$first" "---" "$out"
run "$DUPSCAN" -rL "$M"
[ "$(grep -c "not hard linking on the filesystem of" <<< "$err")" = 1 ] && [ "$(find "$SRV" -type f -links +1 | wc -l)" = 0 ] &&
  ok "sshfs: -L refused once, nothing linked" || not_ok "sshfs: -L" "$err"
umount "$M"
done_testing
