#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --io=net: a network filesystem, where each request waits. The fault shim
# makes each listing, open and read wait 5 ms and counts how many wait at
# once (PEAK); and it makes every regular file's inode number 7 (INO), as a
# FUSE or SMB mount may, where two names with one number are not one file.
. "$(dirname "$0")/../fixtures/lib.sh"
# the shim is built without a sanitizer only: without it, the modes' sets
FAULT=${FAULT_LIB:-}

# 40 directories of 3 files each: pairs and quadruples across directories,
# each of a size of its own (30 groups: work for many threads), and files
# alone in their size
for d in $(seq 1 40); do
  mk "tree/d$d/a" "$(printf 'pair %*s' $((d % 20 + 1)) .)"
  mk "tree/d$d/b" "$(printf 'solo %*s' $((d + 40)) .)"
  mk "tree/d$d/sub/c" "$(printf 'deep %*s' $((d % 10 + 80)) .)"
done

# peak CALLS ARGS...: the most CALLS on the tree that waited at once
peak() {
  local calls=$1; shift
  rm -f "$T/peak.log"
  LD_PRELOAD=$FAULT DUPSCAN_FAULT="$calls:$T/tree/:PEAK" DUPSCAN_FAULT_LOG="$T/peak.log" \
    "$DUPSCAN" -rq "$@" "$T/tree" >"$T/peak.out" 2>&1
  sed -n 's/^peak //p' "$T/peak.log"
}

if [ "${DUPSCAN_THREADS:-yes}" = yes ] && [ -n "$FAULT" ]; then
  n=$(peak openat64,pread64 --io=net)
  if [ "${n:-0}" -ge 8 ]; then ok "--io=net: opens and reads in flight at once ($n)"
  else not_ok "--io=net: opens and reads in flight at once" "peak ${n:-none}"; fi
  n=$(peak openat64,pread64 --io=net --threads=3)
  if [ "${n:-0}" -ge 2 ] && [ "$n" -le 3 ]; then ok "--io=net --threads=3: at most 3 in flight ($n)"
  else not_ok "--io=net --threads=3: at most 3 in flight" "peak ${n:-none}"; fi
  # small directories: ssd mode lists them on the walk's thread, net mode
  # on many, each as soon as its parent is listed
  s=$(peak readdir64 --io=ssd)
  n=$(peak readdir64 --io=net)
  if [ "${s:-0}" -eq 1 ] && [ "${n:-0}" -ge 4 ]; then ok "--io=net: directories listed at once ($n; ssd: $s)"
  else not_ok "--io=net: directories listed at once" "net ${n:-none}, ssd ${s:-none}"; fi
  n=$(peak openat64,pread64 --io=hdd)
  if [ "${n:-0}" -eq 1 ]; then ok "--io=hdd: one request at a time"
  else not_ok "--io=hdd: one request at a time" "peak ${n:-none}"; fi
fi

# the same sets in every mode, with every thread count
want=$("$DUPSCAN" -r --io=ssd tree)
[ -n "$want" ] && [ "$(printf '%s\n' "$want" | grep -c .)" -eq 80 ] && ok "the tree's sets (80 paths)" ||
  not_ok "the tree's sets" "$want"
for mode in net hdd auto; do
  for th in 1 16; do
    expect "--io=$mode --threads=$th: the same sets" 0 "$want" "$DUPSCAN" -r --io=$mode --threads=$th tree
  done
done
[ -n "$FAULT" ] && expect "--io=net under delays: the same sets" 0 "$want" \
  env LD_PRELOAD="$FAULT" DUPSCAN_FAULT="openat64,pread64,readdir64:$T/tree/:DELAY" "$DUPSCAN" -r --io=net tree
expect "bad --io" 2 "" "$DUPSCAN" -r --io=nfs tree
expect_err "bad --io: the modes named" "auto, hdd, ssd or net"

[ -n "$FAULT" ] || done_testing
# ---- inode numbers that repeat: every regular file says 7, one name each ----
ino() { LD_PRELOAD=$FAULT DUPSCAN_FAULT="fstat64,fstatat64:$T/ino/:INO" "$DUPSCAN" "$@"; }
mkino() {
  rm -rf "$T/ino" "$T/moved"
  mk "$T/ino/a/x" "AAAA"; mk "$T/ino/b/x" "AAAA"; mk "$T/ino/d/z" "AAAA"
  mk "$T/ino/c/y" "BBBB"; mk "$T/ino/c/v" "CCCC"; mk "$T/ino/d/w" "CCCC"
  mk "$T/ino/e/u" "DDDD"
}
# contents: every file's path and bytes, sorted
contents() { (cd "$T" && find ino moved -type f 2>/dev/null | sort | while read -r f; do printf '%s=%s\n' "$f" "$(cat "$f")"; done); }
mkino
want=$(printf '%s\n' "$T/ino/a/x" "$T/ino/b/x" "$T/ino/d/z" "" "$T/ino/c/v" "$T/ino/d/w")
# as the kernel numbers them (and as jdupes lists them, when it is here)
expect "repeating inode numbers: the tree's own sets" 0 "$want" "$DUPSCAN" -r "$T/ino"
if command -v jdupes >/dev/null; then
  j=$(jdupes -rq "$T/ino" | sort); d=$("$DUPSCAN" -r "$T/ino" | sort)
  [ "$j" = "$d" ] && ok "jdupes lists the same paths" || not_ok "jdupes lists the same paths" "$j" "---" "$d"
fi
expect "repeating inode numbers: not called one file (link counts say two)" 0 "$want" ino -r "$T/ino"
expect "repeating inode numbers, --io=net: the same" 0 "$want" ino -r --io=net "$T/ino"
# one number there may be one file by two paths (a bind mount): never
# removed nor moved, whatever the bytes say
before=$(contents)
run ino -r -dN "$T/ino"
[ "$(contents)" = "$before" ] && ok "-d: a duplicate with the kept file's number is left" ||
  not_ok "-d: a duplicate with the kept file's number is left" "$before" "--- after" "$(contents)"
printf '%s' "$out" | grep -q "b/x -- .*may be the kept file itself" && ok "-d: says why" || not_ok "-d: says why" "$out"
for act in -dN -L --move-to="$T/moved"; do
  mkino
  ino -r "$act" "$T/ino" >/dev/null 2>&1
  after=$(contents)
  # every content still at its path or moved whole; no unique file touched
  lost=$(printf '%s\n' "$after" | grep -c -e '=BBBB' -e '=DDDD')
  if [ "$lost" -eq 2 ] && ! printf '%s\n' "$after" | grep -q '=$' &&
    printf '%s\n' "$after" | grep -q '^ino/c/y=BBBB$' && printf '%s\n' "$after" | grep -q '^ino/e/u=DDDD$'; then
    ok "$act: no file but a copy changed"
  else not_ok "$act: no file but a copy changed" "$after"; fi
done
# -L: a new link cannot be checked by its number there: none is made, and
# that is said once, not pair by pair
mkino
run ino -r -L "$T/ino"
if [ "$(stat -c %h "$T/ino/a/x")" = 1 ] && [ "$(stat -c %h "$T/ino/b/x")" = 1 ] && [ "$rc" = 1 ] &&
   [ "$(grep -c "not hard linking on the filesystem of" <<< "$err")" = 1 ]; then
  ok "-L: nothing linked where numbers are not kept, said once"
else not_ok "-L where numbers are not kept" "rc $rc" "$err" "$(ls -li "$T"/ino/*/)"; fi

done_testing
