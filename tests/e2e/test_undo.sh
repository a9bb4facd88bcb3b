#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --undo gives back what was there: contents checked against the journal's
# hash (inode numbers reused between two runs of one journal), symlinks as
# symlinks, names of one inode as one inode again (also when a run stopped half
# way), everything before a torn last line; and -s --move-to loses nothing.
. "$(dirname "$0")/../fixtures/lib.sh"
root=$(id -u)

# ---- a symlinked duplicate moved with --move-to, then undone ----
rm -rf tree dups; mkdir tree; echo hello > tree/a; echo hello > tree/c; ln -s c tree/b_link
before=$(snapshot tree)
run "$DUPSCAN" -rs --move-to="$T/dups" --journal="$T/j7" tree
[ "$rc" = 0 ] && [ "$(cat "$T/dups/c" 2>/dev/null || cat tree/c)" = hello ] && [ ! -L "$T/dups/c" ] \
  && ok "-s --move-to: the real file moved as itself, not as a link of the moved symlink" || not_ok "-s --move-to" "$out" "$err" "$(ls -lR tree dups)"
run "$DUPSCAN" --undo="$T/j7"
[ "$rc" = 0 ] && [ "$(snapshot tree)" = "$before" ] && ok "-s --move-to, --undo: the tree exactly as before" \
  || not_ok "-s --move-to undo" "$out" "$err" "$(diff <(echo "$before") <(snapshot tree))"

# ---- -l over a hard link of the kept file comes back as that hard link ----
rm -rf t; mkdir t; echo linked > t/a; ln t/a t/h; echo other > t/u
before=$(snapshot t)
run "$DUPSCAN" -rlH --journal="$T/j8a" t
[ "$rc" = 0 ] && [ -L t/h ] && ok "-lH: a hard link of the kept file becomes a symlink" || not_ok "-lH" "$out" "$err"
run "$DUPSCAN" --undo="$T/j8a"
[ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && [ "$(stat -c %i t/a)" = "$(stat -c %i t/h)" ] \
  && ok "-lH, --undo: the hard link is a hard link again" || not_ok "-lH undo" "$err" "$(diff <(echo "$before") <(snapshot t))"

# ---- -rsHL over a symlinked duplicate comes back as the symlink ----
rm -rf t; mkdir t; echo same > t/a; ln -s c t/b_link; echo same > t/c
before=$(snapshot t)
run "$DUPSCAN" -rsHL --journal="$T/j8c" t
[ "$rc" = 0 ] && [ ! -L t/b_link ] && [ "$(stat -c %i t/a)" = "$(stat -c %i t/b_link)" ] && ok "-rsHL: the symlink replaced by a hard link" || not_ok "-rsHL" "$out" "$err" "$(ls -li t)"
run "$DUPSCAN" --undo="$T/j8c"
[ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && [ -L t/b_link ] && [ "$(readlink t/b_link)" = c ] \
  && ok "-rsHL, --undo: a symlink again, to the same target" || not_ok "-rsHL undo" "$err" "$(diff <(echo "$before") <(snapshot t))"

# ---- a hard-link group replaced half way comes back as one inode ----
if [ -n "${FAULT_LIB:-}" ]; then
  rm -rf t; mkdir -p t/a t/x t/y; echo group > t/a/k; echo group > t/x/d1; ln t/x/d1 t/y/d2
  before=$(snapshot t)
  (DUPSCAN_FAULT="linkat:t/y/:KILL" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rLH --journal="$T/j8b" t > /dev/null) 2>/dev/null; krc=$?
  [ "$krc" = 137 ] && [ "$(stat -c %i t/a/k)" = "$(stat -c %i t/x/d1)" ] && [ "$(stat -c %i t/y/d2)" != "$(stat -c %i t/a/k)" ] \
    && ok "-LH killed half way through a two-name group: one name linked, one not" || not_ok "half way" "status $krc" "$(ls -li t/*)"
  run "$DUPSCAN" --undo="$T/j8b"
  [ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && [ "$(stat -c %i t/x/d1)" = "$(stat -c %i t/y/d2)" ] \
    && ok "--undo after half way: the two names share one inode again" || not_ok "half way undo" "$out" "$err" "$(diff <(echo "$before") <(snapshot t))"
else
  ok "# SKIP no fault library"
fi

# ---- an empty file is no journal (dupscan's begin with their first line):
# status 2, not "nothing to undo" ----
: > empty.j
expect "--undo of an empty file: not a journal, status 2" 2 "" "$DUPSCAN" --undo=empty.j
printf '# dupscan journal 1\nrun\t1700000000\t0.3.0\n' > header.j
expect "--undo of a journal with no change: nothing to undo" 0 "nothing to undo" "$DUPSCAN" --undo=header.j
printf '# dupscan jour' > cut.j
expect "--undo of a journal cut inside its first line: nothing to undo" 0 "nothing to undo" "$DUPSCAN" --undo=cut.j

# ---- a torn last line: everything before it undone ----
mk_long_sets() { # DIR COUNT: sets with long odd names (escapes in the journal)
  rm -rf "$1"; mkdir -p "$1/k" "$1/d"
  local i long
  long=$(printf 'odd\001name-%.0s' $(seq 12))
  for i in $(seq "$2"); do
    echo "content $i" > "$1/k/$i-$long"; cp "$1/k/$i-$long" "$1/d/$i-$long"
  done
}
if [ "$root" = 0 ] && mkdir jfs && mount -t tmpfs -o size=8k tmpfs jfs 2>/dev/null; then
  mk_long_sets t 60; before=$(snapshot t)
  run "$DUPSCAN" -rLO --journal="$T/jfs/j" t/k t/d
  last=$(tail -c 1 jfs/j | od -An -c | tr -d ' ')
  lines=$(($(grep -c '^hardlink' jfs/j) - 1))  # whole lines; the torn one starts so too
  if [ "$rc" != 0 ] && [ "$last" != '\n' ]; then
    ok "full journal filesystem: the run stops ($lines changes journaled, the last line torn)"
    printf '%s' "$err" | grep -q "journal.*stopping before the next change" && ok "full journal: said so" || not_ok "full journal message" "$err"
    cp jfs/j torn.j
    run "$DUPSCAN" --undo=torn.j
    [ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && ok "--undo with a torn last line: every change before it undone" \
      || not_ok "torn undo" "status $rc" "$err" "$(diff <(echo "$before") <(snapshot t) | head)"
    expect_err "--undo names the torn line" "line $((lines + 3)): incomplete .*ignored"
  else
    ok "# SKIP the journal did not end inside a line (status $rc)"
  fi
  umount jfs
else
  ok "# SKIP a small tmpfs for the journal needs root"
fi

# ---- inode numbers reused between two runs sharing a journal ----
if [ "$root" = 0 ] && command -v mkfs.ext4 >/dev/null && truncate -s 16M img && mkfs.ext4 -q -N 256 img 2>/dev/null \
   && mkdir mnt && mount -o loop img mnt 2>/dev/null; then
  mkdir -p mnt/t/k mnt/t/d
  for i in $(seq 40); do echo "first $i" > mnt/t/k/$i; cp mnt/t/k/$i mnt/t/d/$i; done
  first=$(cd mnt/t && sha256sum k/* d/*)
  freed=$(stat -c %i mnt/t/d/* | sort)
  run "$DUPSCAN" -rLO --journal="$T/j5" mnt/t/k mnt/t/d
  mkdir -p mnt/t/k2 mnt/t/d2
  for i in $(seq 40); do echo "second $i" > mnt/t/k2/$i; echo "second $i" > mnt/t/d2/$i; done
  reused=$(comm -12 <(echo "$freed") <(stat -c %i mnt/t/d2/* mnt/t/k2/* | sort) | wc -l)
  second=$(cd mnt/t && sha256sum k2/* d2/*)
  run "$DUPSCAN" -rLO --journal="$T/j5" mnt/t/k2 mnt/t/d2
  if [ "$reused" -gt 0 ]; then
    ok "two -L runs, one journal: $reused inode numbers freed by the first were reused before the second"
    run "$DUPSCAN" --undo="$T/j5"
    now=$(cd mnt/t && sha256sum k/* d/* k2/* d2/*)
    inodes=$(stat -c %i mnt/t/k/* mnt/t/d/* mnt/t/k2/* mnt/t/d2/* | sort -u | wc -l)
    [ "$rc" = 0 ] && [ "$now" = "$(printf '%s\n%s' "$first" "$second")" ] && [ "$inodes" = 160 ] \
      && ok "--undo of both: every file its own content, 160 separate inodes as before" \
      || not_ok "inode reuse undo" "status $rc, $inodes inodes" "$err" "$(diff <(printf '%s\n%s' "$first" "$second") <(echo "$now") | head -20)"
  else
    ok "# SKIP no inode number was reused"
  fi
  umount mnt
else
  ok "# SKIP loop-mounted ext4 needs root"
fi
# ---- a file dated past 2038 comes back with its date ----
rm -rf t; mkdir t; echo far > t/a; echo far > t/b; touch -d '2040-06-01 12:00:00' t/a t/b
before=$(snapshot t)
run "$DUPSCAN" -rL --journal="$T/j2040" t
[ "$rc" = 0 ] && [ "$(stat -c %i t/a)" = "$(stat -c %i t/b)" ] && ok "-L over files dated 2040" || not_ok "-L 2040" "$out" "$err"
run "$DUPSCAN" --undo="$T/j2040"
[ "$rc" = 0 ] && [ "$(snapshot t)" = "$before" ] && [ "$(stat -c %Y t/b)" = "$(date -d '2040-06-01 12:00:00' +%s)" ] \
  && ok "--undo: a file dated 2040 restored with its mtime" || not_ok "--undo 2040" "$err" "$(diff <(echo "$before") <(snapshot t))"

# ---- a second dupscan appending to the same journal at once ----
# the journal appears with its first line in it (made aside, then linked):
# one magic line, at the top; each run's line goes out with its first change
# in one write, so no run's change is filed under the other's run line; -L
# is undone for both trees
rm -rf ra rb; mkdir ra rb
for i in $(seq 40); do echo "a $i" > ra/x$i; cp ra/x$i ra/y$i; echo "b $i" > rb/x$i; cp rb/x$i rb/y$i; done
before=$(snapshot ra; snapshot rb)
for round in 1 2 3; do
  "$DUPSCAN" -rqL --journal="$T/shared.j" ra > /dev/null 2>&1 & p1=$!
  "$DUPSCAN" -rqL --journal="$T/shared.j" rb > /dev/null 2>&1 & p2=$!
  wait $p1 $p2
  "$DUPSCAN" -q --undo="$T/shared.j" > /dev/null 2>&1 || break
  rm -f "$T/shared.j.run$round"; mv "$T/shared.j" "$T/shared.j.run$round"
done
bad=$(for f in "$T"/shared.j.run*; do awk -F'\t' '(prev == "run" && $1 == "run") || (/^# dupscan journal/ && NR > 1) {print FILENAME": line "NR} {prev = $1}' "$f"; done)
[ -z "$bad" ] && [ "$(ls "$T"/shared.j.run* | wc -l)" = 3 ] && [ "$(snapshot ra; snapshot rb)" = "$before" ] &&
  ok "two runs on one journal at once: each run line followed by its own change; --undo restores both" ||
  not_ok "two runs on one journal" "$bad" "$(ls "$T"/shared.j* 2>&1)" "$(diff <(echo "$before") <(snapshot ra; snapshot rb))"

# ---- a moved copy replaced since: its new bytes never lost ----
# two names of one inode moved by rename; one moved copy replaced by another
# file: the undo gives each name back, and the replacing file goes back at its
# name (nothing recorded says otherwise for a rename), never removed
rm -rf t mv; mkdir t; echo same > t/a; echo same > t/d1; ln t/d1 t/d2
run "$DUPSCAN" -rHq --move-to="$T/mv" --journal="$T/jrep" t
rm mv/d1; echo "written since" > mv/d1
run "$DUPSCAN" --undo="$T/jrep"
[ "$rc" = 0 ] && [ "$(cat t/d1)" = "written since" ] && [ "$(cat t/d2)" = same ] \
  && ok "--undo, a moved copy replaced since: it comes back, nothing lost" \
  || not_ok "replaced moved copy" "status $rc" "$out" "$err" "$(ls -liR t mv 2>&1; cat t/d1 mv/d1 2>&1)"

# ---- across filesystems: a name given other content since, its copy kept ----
other=$(for c in /dev/shm "${TMPDIR:-/tmp}"; do [ -d "$c" ] && [ -w "$c" ] && [ "$(stat -c %d "$c")" != "$(stat -c %d "$T")" ] && echo "$c" && break; done)
if [ -n "$other" ]; then
  X=$(mktemp -d "$other/dupscan-undo-XXXXXX")
  rm -rf t; mkdir t; echo same > t/a; echo same > t/d
  run "$DUPSCAN" -rq --move-to="$X/mv" --journal="$T/jx" t
  echo "new file" > t/d
  run "$DUPSCAN" --undo="$T/jx"
  [ "$rc" = 1 ] && [ "$(cat t/d)" = "new file" ] && [ "$(cat "$X/mv/d")" = same ] \
    && expect_err "--undo: a name holding other content than recorded is refused, named, both left" \
      "t/d: a file with other content is in its place; its moved copy is left at $X/mv/d" \
    || not_ok "other content in place" "status $rc" "$out" "$err"
  expect_err "--undo: the changes not undone counted last" "^dupscan: --undo: 1 of 1 changes could not be undone \(named above\)$"
  rm -rf "$X"
else
  ok "# SKIP no second filesystem here"
fi

done_testing
