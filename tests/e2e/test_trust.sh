#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --cache-trust: sets proven byte by byte by an earlier run are listed without
# reading their files while those are unchanged and not racy; new files are
# compared with one member of the class they join; a forged cache may fool a
# listing but never an action. What is read is shown with the fault shim: an
# open that fails is reported, and TRACE logs every read by path.
# the reads it expects were worked out on the disk (on tmpfs a new copy is
# compared with another member of its class)
ON_DISK=1
. "$(dirname "$0")/../fixtures/lib.sh"
export XDG_CACHE_HOME="$T/.cache"
TOOL="python3 $(dirname "$0")/../fixtures/cachetool.py"
have_shim=${FAULT_LIB:+1}
# reads CMD...: run CMD with every pread under t/ logged: $reads, the distinct
# paths read but the racy files t/r1 t/r2 t/r3 (whether those are racy still
# depends on how long the runs took), and $racy, those
reads() {
  rm -f "$T/reads.log"
  run env DUPSCAN_FAULT="pread64:t/:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" LD_PRELOAD="$FAULT_LIB" "$@"
  local all
  all=$( (cut -d' ' -f2- "$T/reads.log" 2>/dev/null || true) | sed 's|.*/t/|t/|' | sort -u)
  reads=$(grep -v '^t/r[123]$' <<< "$all" | grep . | tr '\n' ' ')
  racy=$(grep '^t/r[123]$' <<< "$all" | tr '\n' ' ')
}

# tree DIR: the fixture (classes A and B, a unique file of their size, a file
# sharing A's first block, a small pair)
tree() {
  mkdir -p "$1/d"
  head -c 20000 /dev/urandom > "$1/a1"; cp "$1/a1" "$1/a2"; cp "$1/a1" "$1/d/a3"   # class A
  head -c 20000 /dev/urandom > "$1/b1"; cp "$1/b1" "$1/b2"                         # class B, same size
  head -c 20000 /dev/urandom > "$1/u"                                              # same size, unique
  { head -c 4096 "$1/a1"; head -c 15904 /dev/urandom; } > "$1/x"; cp "$1/x" "$1/y"
  flip_byte "$1/y" 19999                                                           # A's first block, other ends
  { head -c 4096 "$1/a1"; head -c 15904 /dev/urandom; } > "$1/z"                  # A's first block, alone
  head -c 300 /dev/urandom > "$1/s1"; cp "$1/s1" "$1/s2"                           # within one block
}
tree t
for act in dN L l m; do tree "f$act"; done
tree pq/p; tree pq/q
# a pair large enough that comparing it takes a while under the shim's delays
# (5 ms a read of r2: about 260 reads of 1 MiB, a window of over a second)
mkdir race; head -c 4096 /dev/urandom > race/r1; truncate -s 256M race/r1; cp --sparse=always race/r1 race/r2
mkdir -p mg/p mg/q; head -c 30000 /dev/urandom > mg/p/m1; cp mg/p/m1 mg/p/m2; cp mg/p/m1 mg/q/m3; cp mg/p/m1 mg/q/m4
sleep 2.2  # older than the proving runs by more than the racy margin
head -c 5000 /dev/urandom > t/r1; cp t/r1 t/r2                                     # racy: written just before
head -c 5000 /dev/urandom > t/r3                                                  # racy too, and unique
plain=$("$DUPSCAN" -rq t)

run "$DUPSCAN" -rq --cache=c.bin t
[ "$rc" = 0 ] && [ "$out" = "$plain" ] && [ -z "$err" ] && ok "a run with --cache records proofs; same sets" || not_ok "proving run" "$rc" "$out" "$err"
for act in dN L l m; do "$DUPSCAN" -rq --cache="f$act.bin" "f$act" > /dev/null; done
[ "$(stat -c %a c.bin)" = 600 ] && ok "the cache file is created 0600" || not_ok "mode" "$(stat -c %a c.bin)"
# classes: the class numbers that several files' proofs name
classes() { $TOOL dump "$1" | awk '$10 >= 2 {print $8}' | sort | uniq -d | wc -l; }
proven=$($TOOL dump c.bin | awk '$10 >= 2' | wc -l)
alone=$($TOOL dump c.bin | awk '$10 >= 2 {n[$8]++; p[$8] = $NF} END {for (c in n) if (n[c] == 1) print p[c]}' | sed 's|.*/t/||' | sort | tr '\n' ' ')
[ "$proven" = 12 ] && [ "$alone" = "x y z " ] &&
  ok "12 files carry a proof (a1 a2 a3 b1 b2 s1 s2 r1 r2, and x y z, each alone in A's bucket; not u, unique by its first block)" || not_ok "proofs" "$alone" "$($TOOL dump c.bin)"
[ "$(classes c.bin)" = 4 ] && ok "in 4 classes of several files" || not_ok "classes" "$(classes c.bin)"
cp c.bin good.bin

run "$DUPSCAN" -rq --cache=c.bin --cache-trust t
[ "$rc" = 0 ] && [ "$out" = "$plain" ] && [ -z "$err" ] && ok "trusted rescan: the same sets" || not_ok "trusted rescan" "$out" "$err"
cp good.bin j.bin
run "$DUPSCAN" -rq --cache=j.bin --cache-trust -j t
[ "$(grep -c '"proof": "cache"' <<< "$out")" = 3 ] && [ "$(grep -c '"proof": "scan"' <<< "$out")" = 1 ] &&
  grep -Eq '"provenAt": "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{9}Z"' <<< "$out" &&
  ok "-j: proof cache (with provenAt) for the 3 trusted sets, scan for the racy pair" || not_ok "json proof" "$out"
run "$DUPSCAN" -rq --cache-trust -Q t
[ "$rc" = 2 ] && expect_err "--cache-trust with -Q: usage error" "refused with -Q"

if [ -n "$have_shim" ]; then
  cp good.bin c.bin
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t
  [ "$out" = "$plain" ] && [ "$reads" = "" ] && [ "$racy" = "t/r1 t/r2 t/r3 " ] &&
    ok "first trusted rescan of an unchanged tree: reads only the racy files (written within 2 s before the proof; r3 for its cached hash); x, y, z are proven alone in A's bucket" || not_ok "reads" "$reads" "$racy" "$out" "$err"
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t
  [ "$out" = "$plain" ] && [ "$reads" = "" ] && ok "the next trusted rescan reads nothing but racy files" || not_ok "reads 2" "$reads" "$out" "$err"
  plain_bytes=$(bytes "$DUPSCAN" -rq t)
  first_bytes=$(bytes "$DUPSCAN" -rq --cache=p.bin --cache-trust t)
  rm p.bin
  reads "$DUPSCAN" -rq t; plain_reads=$reads
  reads "$DUPSCAN" -rq --cache=p.bin --cache-trust t
  [ "$out" = "$plain" ] && [ "$reads" = "$plain_reads" ] && [ "$first_bytes" -le "$plain_bytes" ] &&
    ok "a first run with --cache-trust reads what a plain run reads ($first_bytes of $plain_bytes bytes)" || not_ok "first trusting run" "$reads" "$plain_reads" "$first_bytes $plain_bytes"
  reads "$DUPSCAN" -rq --cache=p.bin --cache-trust t
  [ "$out" = "$plain" ] && [ "$reads" = "" ] &&
    ok "and the next trusted run reads nothing but racy files" || not_ok "after a first trusting run" "$reads" "$out" "$err"
  reads "$DUPSCAN" -rq --cache=c.bin t
  case "$reads" in *t/a2*t/b2*) ok "without --cache-trust, duplicates are still read and compared";; *) not_ok "no opt-in" "$reads";; esac
  # each way a file can change sends it back to be read, and the listing stays exact
  cp t/a1 t/a4
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t
  [ "$out" = "$("$DUPSCAN" -rq t)" ] && grep -qx t/a4 <<< "$out" && [ "$reads" = "t/a1 t/a4 t/x t/y t/z " ] &&
    ok "a new copy: read, and compared with one member of the class it joins (and the files alone in its bucket)" || not_ok "new copy" "$reads" "$out"
  # its proof is racy until a run starting 2 s after it was written proves it again
  sleep 2.1
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t; again=$reads
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t
  [ "$again" = "t/a1 t/a4 t/x t/y t/z " ] && [ "$reads" = "" ] && [ "$out" = "$("$DUPSCAN" -rq t)" ] &&
    ok "proven again once no longer racy: the next trusted run reads nothing" || not_ok "new copy proven" "$again" "$reads" "$out"
  rm t/a4 t/d/a3
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t
  [ "$out" = "$("$DUPSCAN" -rq t)" ] && [ "$reads" = "" ] && ok "a member deleted: the others stay proven, nothing read" || not_ok "deleted" "$reads" "$out"
  cp t/b1 new; touch -r t/a2 new; cat new > t/a2; touch -r new t/a2                 # a2 rewritten as B, size and mtime put back
  reads "$DUPSCAN" -rq --cache=c.bin --cache-trust t
  [ "$out" = "$("$DUPSCAN" -rq t)" ] && [ "$reads" = "t/a2 t/b1 " ] && grep -qx t/a2 <<< "$out" &&
    ok "rewritten in place with its mtime restored (ctime moved): read, compared with one member of B" || not_ok "ctime" "$reads" "$out"
  # two trusting runs at once on one cache: both keep their proofs
  "$DUPSCAN" -rq --cache=s.bin --cache-trust pq/p > p.out 2> p.err & a=$!
  "$DUPSCAN" -rq --cache=s.bin --cache-trust pq/q > q.out 2> q.err & b=$!
  wait $a; ra=$?; wait $b; rb=$?
  [ "$ra" = 0 ] && [ "$rb" = 0 ] && [ ! -s p.err ] && [ ! -s q.err ] && ok "two trusting runs at once on one cache" || not_ok "concurrent" "$ra $rb" "$(cat p.err q.err)"
  rm -f "$T/reads.log"
  run env DUPSCAN_FAULT="pread64:pq/:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --cache=s.bin --cache-trust pq
  [ "$out" = "$("$DUPSCAN" -rq pq)" ] && [ ! -s "$T/reads.log" ] &&
    ok "then a trusted run over both trees reads nothing, same sets" || not_ok "concurrent proofs" "$(cat "$T/reads.log")" "$out"
  [ "$(classes s.bin)" = 6 ] &&
    ok "each run's classes kept their own numbers (6: A, B, small, in each tree)" || not_ok "class numbers" "$($TOOL dump s.bin)"
  # one content proven twice, by runs over separate trees: the trusted run over
  # both compares one file of each class, and the classes become one
  "$DUPSCAN" -rq --cache=m.bin mg/p > /dev/null; "$DUPSCAN" -rq --cache=m.bin mg/q > /dev/null
  rm -f "$T/reads.log"
  run env DUPSCAN_FAULT="pread64:mg/:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --cache=m.bin --cache-trust mg
  nread=$(cut -d' ' -f2- "$T/reads.log" | sort -u | wc -l)
  [ "$rc" = 0 ] && [ "$out" = "$("$DUPSCAN" -rq mg)" ] && [ "$(grep -c . <<< "$out")" = 4 ] && [ "$nread" = 2 ] &&
    ok "two proven classes of one content: one file of each compared, one set of 4" || not_ok "merge classes" "$rc" "$out" "$err" "$(cat "$T/reads.log")"
  [ "$(classes m.bin)" = 1 ] && ok "and saved as one class" || not_ok "one class" "$($TOOL dump m.bin)"
  # a writer rewrites the duplicate in place (its mtime put back) while -dN
  # compares the pair the cache vouched for: the duplicate stays, with the new bytes
  "$DUPSCAN" -rq --cache=race.bin race > /dev/null
  rm -f "$T/race.log"
  env DUPSCAN_FAULT="pread64:r2:TRACE" DUPSCAN_FAULT_LOG="$T/race.log" LD_PRELOAD="$FAULT_LIB" \
    "$DUPSCAN" -rdN --cache=race.bin --cache-trust race > race.out 2>&1 & pid=$!
  wait_for "$T/race.log" "r2"  # the compare reads it (the shim logs the name it was opened by)
  python3 -c 'import os, sys
fd = os.open("race/r2", os.O_RDWR)  # no O_CREAT: a name already gone is not made again
st = os.fstat(fd); os.pwrite(fd, b"written meanwhile", 1000); os.close(fd)
os.utime("race/r2", ns=(st.st_atime_ns, st.st_mtime_ns))' && wrote=yes
  wait $pid; rc=$?
  [ "${wrote:-}" = yes ] && [ -f race/r2 ] && grep -q "written meanwhile" race/r2 && [ "$rc" = 1 ] &&
    ok "a duplicate rewritten while the trusted pair is compared: not deleted, its new bytes kept" || not_ok "race" "$rc" "$(cat race.out)" "${wrote:-no write}"
else
  echo "# skipped read counts: the fault shim is not built here (sanitizer build)"
fi

# a forged cache: u claims A's hashes and proof
forge() { $TOOL forge "f$1.bin" a1 u; }
forge dN
run "$DUPSCAN" -rq --cache=fdN.bin --cache-trust fdN
grep -qx fdN/u <<< "$out" && ok "a forged cache can make the listing wrong (documented): u is listed with A" || not_ok "forged listing" "$out" "$err"
sum_u=$(sha1sum < fdN/u)
run "$DUPSCAN" -rdN --cache=fdN.bin --cache-trust fdN
[ "$rc" = 1 ] && [ -f fdN/u ] && [ "$(sha1sum < fdN/u)" = "$sum_u" ] && grep -q "fdN/u -- The contents differ" <<< "$out" &&
  ok "-dN refuses the forged pair (compared byte by byte): u kept" || not_ok "-dN forged" "$rc" "$out" "$err"
[ -e fdN/a1 ] && [ ! -e fdN/a2 ] && [ ! -e fdN/d/a3 ] && [ ! -e fdN/b2 ] && ok "and deletes the true duplicates, each compared with the kept file" || not_ok "-dN rest" "$(ls -R fdN)"
for act in L l m; do
  forge $act
  sum_u=$(sha1sum < f$act/u)
  case $act in m) opt="--move-to=$T/moved";; *) opt=-$act;; esac
  run "$DUPSCAN" -r $opt --cache=f$act.bin --cache-trust f$act
  [ "$rc" = 1 ] && [ -f f$act/u ] && [ ! -L f$act/u ] && [ "$(stat -c %h f$act/u)" = 1 ] && [ "$(sha1sum < f$act/u)" = "$sum_u" ] &&
    grep -q "f$act/u.*The contents differ" <<< "$out$err" && ok "$opt refuses the forged pair; u untouched" || not_ok "$opt forged" "$rc" "$out" "$err"
done
done_testing
