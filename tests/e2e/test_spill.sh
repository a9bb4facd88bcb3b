#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --max-memory: 140,000 small files (every one a candidate, one in ten a
# copy) pass a 16M budget. The listing is byte for byte the one without a
# budget, in both reading modes, and --temp-dir is left empty (the file has
# no name); a folder that is not there or fills ends that run (status 1, the
# folder named, no set listed: the records did go there), while a tree
# within the budget never touches it; a kill at any moment
# leaves nothing in the folder; -d acts on the sets of a spilled scan and
# leaves one file of each; --summary=dirs, --overlap, the page, -u and
# --missing are as without a budget; --cache under the budget saves the cache saved
# without one, --cache-trust then reads none of the files, and a run killed
# half way resumes from its log under the budget; what needs every record
# is refused (status 2).
. "$(dirname "$0")/../fixtures/lib.sh"
# (140,000 files made and removed on this VM's disk take minutes: tmpfs)
work_in_shm spill
D=${W:-$T}

N=${SPILL_FILES:-140000}
python3 "$SOURCE_ROOT/tests/fixtures/smalltree.py" "$N" big small
mkdir tmp

for io in ssd hdd; do
  "$DUPSCAN" -rq --io=$io big > plain.out
  run "$DUPSCAN" -rq --io=$io --max-memory=16M --temp-dir="$D/tmp" big
  if [ "$rc" = 0 ] && [ -s plain.out ] && [ "$out" = "$(cat plain.out)" ]; then
    ok "--io=$io --max-memory=16M: the listing of the scan without a budget"
  else
    not_ok "--io=$io --max-memory=16M: listing differs" "status $rc" "$err" "$(diff <(echo "$out") plain.out | head -5)"
  fi
done
# the sets are the contents' (the listing above is not only equal, but right)
norm() { python3 -c 'import sys
sets = [s.split("\n") for s in open(sys.argv[1]).read().split("\n\n") if s.strip()]
for s in sorted(sorted(x for x in s if x) for s in sets): print("\n".join(s) + "\n")' "$1"; }
diff <(norm plain.out) <(norm big.want) >/dev/null && ok "the sets the contents make" || not_ok "sets differ from the contents'"

[ -z "$(ls -A tmp)" ] && ok "--temp-dir is left empty" || not_ok "left in --temp-dir" "$(ls -A tmp)"

# the progress line counts the bands as one: the same total throughout, a
# count that never goes back, 100% once, at the end
for io in ssd hdd; do
  "$DUPSCAN" -r --io=$io --progress --max-memory=16M --temp-dir="$D/tmp" big > /dev/null 2> progress.txt
  verdict=$(tr '\r' '\n' < progress.txt | python3 -c 'import re, sys
seen = [tuple(map(int, m.groups())) for m in (re.match(r"(?:Progress|First blocks) \[(\d+)/(\d+)\]", l) for l in sys.stdin) if m]
totals = {t for _, t in seen}
done = [d for d, _ in seen]
full = sum(1 for d, t in seen if d == t)
ok = len(seen) > 1 and len(totals) == 1 and done == sorted(done) and full == 1 and seen[-1][0] == seen[-1][1]
print("ok" if ok else f"{len(seen)} lines, totals {sorted(totals)[:4]}, {full} at 100%, counts {done[:8]}")')
  [ "$verdict" = ok ] && ok "--io=$io: one progress count across the bands" || not_ok "--io=$io: progress across bands" "$verdict"
done

# a folder that cannot take the file: the run ends before any set is listed
run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/gone" big
if [ "$rc" = 1 ] && [ -z "$out" ] && grep -q "$D/gone" <<< "$err" && grep -q "$E_NOENT" <<< "$err"; then
  ok "a --temp-dir that is not there: status 1, named, nothing listed"
else
  not_ok "a --temp-dir that is not there" "status $rc" "$err" "$(head -3 <<< "$out")"
fi
run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/gone" small
[ "$rc" = 0 ] && [ -n "$out" ] && ok "within the budget the folder is never used" || not_ok "a small tree used --temp-dir" "status $rc" "$err"
if [ "$(id -u)" = 0 ] && mkdir full && mount -t tmpfs -o size=64k tmpfs full 2>/dev/null; then
  run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/full" big
  nospc=$(errtext ENOSPC)
  if [ "$rc" = 1 ] && [ -z "$out" ] && grep -q "$D/full: $nospc" <<< "$err"; then
    ok "a full --temp-dir: status 1, named, nothing listed"
  else
    not_ok "a full --temp-dir" "status $rc" "$err"
  fi
  umount full
else
  ok "# SKIP a full folder needs root to mount a small tmpfs"
fi

# killed while spilling or merging: the unnamed file goes with the process
for delay in 0.3 0.8 1.5; do
  "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/tmp" big > /dev/null 2>&1 &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  [ -z "$(ls -A tmp)" ] && ok "killed after ${delay}s: nothing left in --temp-dir" || not_ok "left after a kill" "$(ls -A tmp)"
done

# --cache under the budget: the cache saved without one (but the class
# numbers and times, a run's own), the same listing; trusted, no file read
TOOL="python3 $SOURCE_ROOT/tests/fixtures/cachetool.py"
entries() { $TOOL dump "$1" | awk '{$8 = ""; $9 = ""; print}'; }
"$DUPSCAN" -rq --cache="$D/plain.cache" big > /dev/null
run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/tmp" --cache="$D/spill.cache" big
if [ "$rc" = 0 ] && [ "$out" = "$(cat plain.out)" ] && [ "$(entries plain.cache | wc -l)" -gt $((N / 2)) ] &&
   diff <(entries plain.cache) <(entries spill.cache) > /dev/null; then
  ok "--cache under the budget: the listing, and the cache saved without a budget"
else
  not_ok "--cache under the budget" "status $rc" "$err" "$(diff <(entries plain.cache) <(entries spill.cache) | head -4)"
fi
[ -z "$(ls -A tmp)" ] && ok "--temp-dir left empty after a cached run" || not_ok "left in --temp-dir" "$(ls -A tmp)"
if [ -n "${FAULT_LIB:-}" ]; then
  # reads CMD...: the reads of files under big/ (the fault shim's log)
  reads() {
    rm -f "$D/reads.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:big/:LOG" DUPSCAN_FAULT_LOG="$D/reads.log" "$@"
    nreads=$( (cat "$D/reads.log" 2>/dev/null || true) | wc -l)
  }
  reads "$DUPSCAN" -rq --max-memory=16M --cache="$D/spill.cache" --cache-trust big
  [ "$rc" = 0 ] && [ "$out" = "$(cat plain.out)" ] && [ "$nreads" = 0 ] &&
    ok "--cache-trust under the budget: the listing, no file read" || not_ok "--cache-trust under the budget" "status $rc, $nreads reads" "$err"
  # killed half way through a first cached scan under the budget: the next
  # run takes its log, reads what was left, and folds the log in
  reads "$DUPSCAN" -rq --max-memory=16M --cache="$D/k.cache" big
  full=$nreads
  rm -f k.cache
  env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:big/:KILL@$((full / 2))" "$DUPSCAN" -rq --max-memory=16M --cache="$D/k.cache" big > /dev/null 2>&1
  [ ! -e k.cache ] && [ -s k.cache.log ] && ok "killed half way under the budget: its log is there" || not_ok "no log after the kill"
  reads "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/tmp" --cache="$D/k.cache" --cache-trust big
  if [ "$rc" = 0 ] && [ "$out" = "$(cat plain.out)" ] && [ "$nreads" -gt 0 ] && [ "$nreads" -lt $((full * 7 / 10)) ] &&
     [ ! -e k.cache.log ] && [ -s k.cache ]; then
    ok "resumed under the budget: the listing, $nreads reads of $full, the log folded"
  else
    not_ok "resumed under the budget" "status $rc, $nreads reads of $full" "$err" "$(ls k.cache*)"
  fi
else
  ok "# SKIP no fault shim: reads under --cache-trust"
fi

# a folder with room for the records but not the cache's notes: the scan
# lists its sets all the same (the folder told), saves no cache, and keeps
# its log; the next run, with room, takes it and saves the cache
if [ "$(id -u)" = 0 ] && mkdir full2 && mount -t tmpfs -o size=10m tmpfs full2 2>/dev/null; then
  rm -f f.cache f.cache.log
  run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/full2" --cache="$D/f.cache" big
  nospc=$(errtext ENOSPC)
  if [ "$rc" = 0 ] && [ "$out" = "$(cat plain.out)" ] && grep -q "$D/full2: $nospc" <<< "$err" && [ ! -e f.cache ] &&
     [ -s f.cache.log ]; then
    ok "no room for the cache's notes: the listing, the folder told, no cache saved, the log kept"
  else
    not_ok "no room for the cache's notes" "status $rc" "$err" "$(ls f.cache* 2>&1)"
  fi
  umount full2
  run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/tmp" --cache="$D/f.cache" big
  [ "$rc" = 0 ] && [ "$out" = "$(cat plain.out)" ] && [ -s f.cache ] && [ ! -e f.cache.log ] &&
    ok "the next run with room: the cache saved, the log folded" || not_ok "the run after" "status $rc" "$err" "$(ls f.cache* 2>&1)"
else
  ok "# SKIP no room for the notes: needs root to mount a small tmpfs"
  ok "# SKIP the run after"
fi

# the other side of HOST:PATH under its own budget (a fake remote shell runs
# "dupscan --server" here): it keeps the files its client may ask for, and
# the listing is a local scan's, with the client's sizes (a reference here)
# and without them
cat > "$D/rsh" <<'SH'
#!/bin/sh
shift
exec sh -c "$*"
SH
cat > "$D/srv" <<SH
#!/bin/sh
exec "$DUPSCAN" --max-memory=16M --temp-dir="$D/tmp" "\$@"
SH
chmod +x "$D/rsh" "$D/srv"
hostsets() { sed 's|^localhost:||' | python3 -c 'import sys
sets = [s for s in sys.stdin.read().split("\n\n") if s.strip()]
print("\n".join(sorted(" ".join(sorted(p for p in s.split("\n") if p)) for s in sets)))'; }
for ref in "$D/small" "--reference=$D/small"; do
  # shellcheck disable=SC2086
  want=$("$DUPSCAN" -rq $ref "$D/big" | hostsets)
  # shellcheck disable=SC2086
  run "$DUPSCAN" -rq --rsh="$D/rsh" --remote-dupscan="$D/srv" $ref "localhost:$D/big"
  got=$(echo "$out" | hostsets)
  if [ "$rc" = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] && [ -z "$(ls -A tmp)" ]; then
    ok "a server under --max-memory=16M, $ref: a local scan's sets"
  else
    not_ok "a server under its budget, $ref" "status $rc" "$err" "$(diff <(echo "$want") <(echo "$got") | head -4)"
  fi
done

# this side of HOST:PATH under its budget: it waits for the other side's
# results, keeps its unique files of that side's sizes, and lists what it
# lists without a budget; a reference there is told this side's sizes from
# the spill
for ref in "localhost:$D/small" "--reference=localhost:$D/small"; do
  # shellcheck disable=SC2086
  want=$("$DUPSCAN" -rq --rsh="$D/rsh" --remote-dupscan="$DUPSCAN" $ref "$D/big")
  # shellcheck disable=SC2086
  run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/tmp" --rsh="$D/rsh" --remote-dupscan="$DUPSCAN" $ref "$D/big"
  if [ "$rc" = 0 ] && [ -n "$want" ] && [ "$out" = "$want" ] && [ -z "$(ls -A tmp)" ]; then
    ok "this side under --max-memory=16M, $ref: the listing without a budget"
  else
    not_ok "this side under its budget, $ref" "status $rc" "$err" "$(diff <(echo "$want") <(echo "$out") | head -4)"
  fi
done

# the directories' figures, the overlaps, the page, -u and --missing: those
# of a scan without a budget, the unique files counted as their bands end,
# or kept for -u and --missing (the page's command line aside)
for opt in --summary=dirs --overlap=10 --format=html -u --missing; do
  case $opt in --missing) extra=--reference=big/000 ;; *) extra= ;; esac
  # shellcheck disable=SC2086
  want=$("$DUPSCAN" -rq "$opt" $extra big 2>/dev/null | sed 's/"command": "[^"]*"//')
  # shellcheck disable=SC2086
  "$DUPSCAN" -rq "$opt" $extra big > /dev/null 2>&1
  wrc=$? # (3 with --missing: some are)
  # shellcheck disable=SC2086
  run "$DUPSCAN" -rq --max-memory=16M --temp-dir="$D/tmp" "$opt" $extra big
  got=$(echo "$out" | sed 's/"command": "[^"]*"//')
  if [ "$rc" = "$wrc" ] && [ -n "$want" ] && [ "$got" = "$want" ]; then
    ok "$opt under --max-memory=16M: as without a budget"
  else
    not_ok "$opt under the budget" "status $rc" "$err" "$(diff <(echo "$want") <(echo "$got") | head -4)"
  fi
done

# -d on the sets of a spilled scan: one file of each set left, every other file untouched
run "$DUPSCAN" -rqdN --max-memory=16M --temp-dir="$D/tmp" big
left=$(python3 - big.want <<'PY'
import os, sys
sets = [[p for p in s.split("\n") if p] for s in open(sys.argv[1]).read().split("\n\n") if s.strip()]
print(sum(1 for s in sets if sum(os.path.exists(p) for p in s) != 1))
PY
)
files=$(find big -type f | wc -l)
want=$(python3 -c 'import sys
sets = [[p for p in s.split("\n") if p] for s in open(sys.argv[1]).read().split("\n\n") if s.strip()]
print(int(sys.argv[2]) - sum(len(s) - 1 for s in sets))' big.want "$N")
if [ "$rc" = 0 ] && [ "$left" = 0 ] && [ "$files" = "$want" ]; then
  ok "-dN under the budget: one file of each set left, $files files"
else
  not_ok "-dN under the budget" "status $rc, $left sets without exactly one file, $files files (want $want)" "$err"
fi

# no set left after -dN: -m says so on standard output, as without a budget
# (its unique files were examined, though not kept)
run "$DUPSCAN" -rqm --max-memory=16M --temp-dir="$D/tmp" big
if [ "$rc" = 0 ] && grep -q "No duplicates found" <<< "$out"; then
  ok "-m under the budget, no set: said on standard output"
else
  not_ok "-m under the budget, no set" "status $rc" "out: $out" "err: $err"
fi

# what needs every file's record is refused before anything is scanned
run "$DUPSCAN" -rq --max-memory=16M --dirs big
[ "$rc" = 2 ] && grep -q -- "--max-memory" <<< "$err" && ok "--max-memory with --dirs: refused" || not_ok "--max-memory with --dirs" "status $rc" "$err"
run "$DUPSCAN" -rq --max-memory=8M small
[ "$rc" = 2 ] && grep -q "16M" <<< "$err" && ok "--max-memory below 16M: refused" || not_ok "--max-memory=8M" "status $rc" "$err"
run "$DUPSCAN" -rq --temp-dir="$D/tmp" --dirs small
[ "$rc" = 2 ] && ok "--temp-dir with --dirs: refused" || not_ok "--temp-dir --dirs" "status $rc" "$err"
# the default budget, half the machine's memory: this tree is within it
run "$DUPSCAN" -rq --temp-dir="$D/gone" small
[ "$rc" = 0 ] && [ -n "$out" ] && ok "--temp-dir alone: the default budget holds a small tree" || not_ok "--temp-dir alone" "status $rc" "$err"

done_testing
