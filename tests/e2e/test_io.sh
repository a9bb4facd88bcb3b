#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --io: reading as for a spinning disk (one stream, first blocks read ahead in
# disk order) or as for an SSD gives the same output, byte for byte, on every
# kind of tree and listing; auto mode tells storage apart on real mounts
# (tmpfs: memory; a loop device marked rotational: a disk), and on tmpfs,
# which has no FIEMAP, the inode order stands in.
BLOCKTRACE=$(cd "$(dirname "$0")/../fixtures" && pwd)/blocktrace.py
. "$(dirname "$0")/../fixtures/lib.sh"

# a tree with what matching meets: sizes within and past the first block,
# files differing early, late and in the last byte, hard links, symlinks, empty
# files, many files of one size, names needing order care, nested directories
tree() { # DIR
  local d=$1 i
  mkdir -p "$d/a/b/c" "$d/x" "$d/y"
  for i in 1 2 3; do head -c 300000 /dev/zero | tr '\0' 'a' > "$d/a/big$i"; done
  cp "$d/a/big1" "$d/a/b/late"; printf 'Z' | dd of="$d/a/b/late" bs=1 seek=200000 conv=notrunc 2>/dev/null
  cp "$d/a/big1" "$d/a/b/last"; printf 'Z' | dd of="$d/a/b/last" bs=1 seek=299999 conv=notrunc 2>/dev/null
  cp "$d/a/b/last" "$d/x/last2"
  cp "$d/a/big1" "$d/y/early"; printf 'Z' | dd of="$d/y/early" bs=1 seek=10 conv=notrunc 2>/dev/null
  for i in $(seq 1 40); do printf 'small %d\n' $((i % 7)) > "$d/a/b/c/s$i"; done
  printf 'solo' > "$d/x/solo"; : > "$d/x/empty1"; : > "$d/y/empty2"
  ln "$d/a/big2" "$d/x/hard2"; ln -s ../a/big3 "$d/y/sym3"
  printf 'name' > "$d/x/File10"; printf 'name' > "$d/x/file9"; printf 'name' > "$d/y/FILE9"
}

# put DIR's files out of the page cache, so that --io=hdd reads them in disk
# order (what is cached it takes at once; tmpfs keeps everything)
evict() { # (tests/tools/evict.c: one process a tree)
  "$EVICT" "$1"
}

compare_modes() { # LABEL DIR
  local label=$1 dir=$2 opts
  for opts in "-r" "-rH" "-rS" "-rm" "-rj" "-ru" "-rz" "-rs" "-rTT" "-rQ" "-r -o time" "-rO" "-r --threads=1" "-r --threads=2"; do
    # shellcheck disable=SC2086
    run "$DUPSCAN" --io=ssd $opts "$dir"; local o1=${out//--io=ssd/--io=X} e1=$err r1=$rc
    evict "$dir"
    # shellcheck disable=SC2086
    run "$DUPSCAN" --io=hdd $opts "$dir"; out=${out//--io=hdd/--io=X}   # -j quotes the command line
    if [ "$out" = "$o1" ] && [ "$err" = "$e1" ] && [ "$rc" = "$r1" ] && [ -n "$out" ]; then
      ok "$label $opts: --io=hdd and --io=ssd agree"
    else
      not_ok "$label $opts: hdd/ssd differ" "ssd ($r1): $o1 $e1" "hdd ($rc): $out $err"
    fi
  done
}

tree t
compare_modes "here" t

# the first blocks kept by the pass run out: the rest are read again
mkdir -p many; for i in $(seq 1 300); do printf 'file %d of many\n' $((i % 150)) > "many/f$i"; done
run "$DUPSCAN" --io=ssd -r many; o1=$out
evict many
run "$DUPSCAN" --io=hdd -r many
[ "$out" = "$o1" ] && [ "$(printf '%s\n' "$out" | grep -c .)" = 300 ] && ok "300 small files: hdd and ssd agree" \
  || not_ok "many: hdd/ssd differ" "$o1" "$out"

# the same output, and errors in the same order, for many directories at
# two levels
mkdir -p wide
(cd wide && mkdir -p d{1..70}/e{1..70} && for i in $(seq 1 70); do
   printf 'w%d' $((i % 9)) > "d$i/f"; printf 'w%d' $((i % 5)) > "d$i/e$i/g"; ln -s loop "d$i/loop"; done
 ln -s ../d1 d2/e2/up)
for opts in "-r" "-rs" "-rH"; do
  # shellcheck disable=SC2086
  run "$DUPSCAN" --io=ssd $opts wide; o1=$out e1=$err r1=$rc
  evict wide
  # shellcheck disable=SC2086
  run bash -c "ulimit -n 100 && exec '$DUPSCAN' --io=hdd $opts wide"
  if [ "$out" = "$o1" ] && [ "$err" = "$e1" ] && [ "$rc" = "$r1" ] && [ -n "$out" ]; then
    ok "4,970 directories $opts: hdd and ssd agree"
  else
    not_ok "wide tree $opts: hdd/ssd differ" "ssd ($r1): $o1 $e1" "hdd ($rc): $out $err"
  fi
done

# a file that cannot be read is reported the same way, at the same place
if [ "$(id -u)" != 0 ]; then
  cp -r t u; chmod 000 u/a/big3
  run "$DUPSCAN" --io=ssd -r u; o1=$out e1=$err r1=$rc
  run "$DUPSCAN" --io=hdd -r u
  [ "$out" = "$o1" ] && [ "$err" = "$e1" ] && [ "$rc" = "$r1" ] && ok "an unreadable file: hdd and ssd report it alike" \
    || not_ok "unreadable: hdd/ssd differ" "$o1 $e1" "$out $err"
fi

expect_err_io() { # LABEL WANT DIR
  if command -v script >/dev/null; then
    local got; got=$(script -qec "'$DUPSCAN' -r '$3'" /dev/null)
    case "$got" in *"Progress ["*"($2"*) ok "$1" ;; *) not_ok "$1" "$got" ;; esac
  else
    ok "# SKIP script(1) not installed"
  fi
}

# hdd mode's sweep with room for two files kept (--io-memory=1M, files of
# 400,000 bytes), on a fresh ext4 where the files lie in the order written
# (FIEMAP gives that order): k1 and a1 are kept; x (unlike k1) finds no room
# and waits; a2 joins a1, whose memory is freed; y, the twin of x, must then
# wait too, not be kept: kept, it would be settled alone and x after it,
# alone too. Then x and y, told apart from k1 by the first sweep, make a
# set in a second.
sweep_order() { # DIR on the ext4 image
  local d=$1
  mkdir -p "$d"
  head -c 200000 /dev/zero | tr '\0' 'k' > "$d/.head"
  make() { # NAME SIZE FILL
    { cat "$d/.head"; head -c $(($2 - 200000)) /dev/zero | tr '\0' "$3"; } > "$d/$1"; sync "$d/$1"
  }
  make k1 400000 K; make a1 400001 A; make x 400000 X; make a2 400001 A; make y 400000 X
  rm "$d/.head"; sync
  evict "$d"
  run "$DUPSCAN" --io=hdd --io-memory=1M -r "$d"
  local want; want=$(printf '%s\n%s\n\n%s\n%s' "$d/a1" "$d/a2" "$d/x" "$d/y")
  [ "$out" = "$want" ] && [ "$rc" = 0 ] && ok "hdd sweep: a file that waits and its later twin make a set" \
    || not_ok "hdd sweep: waiting twins" "$out" "$err"
  run "$DUPSCAN" --io=ssd -r "$d"
  [ "$out" = "$want" ] && ok "ssd: the same sets" || not_ok "ssd sweep tree" "$out"
}

# hdd mode lists the directories of 16 KiB or more waiting on the walk's
# stack together and stats their entries in one inode order: what it
# reports, and in what order, is still the walk's; and at most 64 of them
# hold a descriptor, however many wait at each level: 70 such directories,
# and under the one walked first 70 more, under a limit of 100 descriptors
# (ext4 keeps a directory's size when its entries go)
wide_big() { # DIR on the ext4 image
  local d=$1 top
  mkdir -p "$d"
  grow() { python3 -c '
import os, sys
for d in sys.argv[1:]:
    names = [os.path.join(d, "x" * 240 + str(i)) for i in range(70)]  # 70 entries of 248 bytes: past 16 KiB
    for p in names: open(p, "w").close()
    for p in names: os.unlink(p)' "$@"; }
  (cd "$d" && mkdir $(seq -f 'd%g' 1 70) && for i in $(seq 1 70); do printf 'w%d' $((i % 9)) > "d$i/f"; done)
  top=$(ls -U "$d" | tail -n 1)   # listed last: on top of the stack, walked first
  (cd "$d/$top" && mkdir $(seq -f 'e%g' 1 70) && for i in $(seq 1 70); do printf 'w%d' $((i % 5)) > "e$i/g"; done)
  grow "$d"/d* "$d/$top"/e*
  if [ "$(stat -c %s "$d/$top/e1")" -lt 16384 ]; then
    ok "# SKIP directories do not keep their size here"
    return
  fi
  run "$DUPSCAN" --io=ssd -r "$d"; local o1=$out e1=$err r1=$rc
  evict "$d"
  run bash -c "ulimit -n 100 && exec '$DUPSCAN' --io=hdd -r '$d'"
  if [ "$out" = "$o1" ] && [ "$err" = "$e1" ] && [ "$rc" = "$r1" ] && [ -n "$out" ]; then
    ok "140 directories listed ahead: hdd (100 descriptors) and ssd agree"
  else
    not_ok "directories listed ahead: hdd/ssd differ" "ssd ($r1): $o1 $e1" "hdd ($rc): $out $err"
  fi
}

# large files alike in their heads are compared on their last block first
# (in hdd mode's sweep, from 16 MiB): four that differ only in their last
# byte are not read on (sparse files of 17 MiB: holes read as zeros)
tail_check() { # DIR on the ext4 image
  local d=$1 f
  mkdir -p "$d"
  for f in a1 a2 b1 b2 b3 b4; do
    printf 'start' > "$d/$f"; truncate -s 17M "$d/$f"
  done
  for f in b1 b2 b3 b4; do printf '%s' "${f#b}" | dd of="$d/$f" bs=1 seek=$((17 * 1048576 - 1)) conv=notrunc 2>/dev/null; done
  sync; evict "$d"
  if [ -n "${FAULT_LIB:-}" ]; then
    rm -f "$T/tail.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:$d:TRACE" DUPSCAN_FAULT_LOG="$T/tail.log" \
      "$DUPSCAN" --io=hdd -r "$d"
    local reads_b reads_a
    reads_b=$(grep -c "/b[1-4]\$" "$T/tail.log"); reads_a=$(grep -c "/a[12]\$" "$T/tail.log")
    [ "$out" = "$(printf '%s\n%s' "$d/a1" "$d/a2")" ] && [ "$reads_b" = 8 ] && [ "$reads_a" -gt 8 ] &&
      ok "hdd: files differing in their last byte cost a head and a last block each" ||
      not_ok "hdd last-block check" "$out" "b reads: $reads_b (want 8), a reads: $reads_a" "$(cat "$T/tail.log")"
  fi
  evict "$d"
  run "$DUPSCAN" --io=hdd -r "$d"; local o1=$out
  run "$DUPSCAN" --io=ssd -r "$d"
  [ "$out" = "$o1" ] && [ "$out" = "$(printf '%s\n%s' "$d/a1" "$d/a2")" ] && ok "last-block check: hdd and ssd agree" \
    || not_ok "last-block check: hdd/ssd" "$o1" "$out"
}

# a disk serves one request at a time: in hdd mode's sweep each file's bytes
# are asked for (posix_fadvise WILLNEED) before they are read, and the next
# file of the disk's order is asked for while the last chunk of the one
# before is read, not after (then the disk would wait between two files);
# of a file read in two chunks (b*: 9 MiB, chunks of 8), only while its
# last. The shim logs each read and each ask in the order they are made.
sweep_asks_ahead() { # DIR on the ext4 image
  local d=$1 i
  mkdir -p "$d"
  for i in 1 2 3; do
    head -c $((300000 + i)) /dev/zero | tr '\0' "$i" > "$d/p$i"; cp "$d/p$i" "$d/q$i"
  done
  printf 'big' > "$d/b1"; truncate -s 9M "$d/b1"; cp --sparse=always "$d/b1" "$d/b2"
  sync; evict "$d"
  if [ -z "${FAULT_LIB:-}" ]; then
    ok "# SKIP no fault shim"
    return
  fi
  rm -f "$T/ask.log"
  run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64,willneed:$d/:TRACE" DUPSCAN_FAULT_LOG="$T/ask.log" \
    "$DUPSCAN" --io=hdd -r "$d"
  local want; want=$(printf '%s\n%s\n\n' "$d/b1" "$d/b2"; for i in 1 2 3; do printf '%s\n%s\n\n' "$d/p$i" "$d/q$i"; done)
  # files in the order of their last read; for each, was the next one
  # asked for before that read, and after the read before it?
  local verdict
  verdict=$(awk '{ n++; if ($2 == "pread64") { prev[$3] = last[$3]; last[$3] = n; reads[$3]++ }
                   else if (!($3 in asked)) asked[$3] = n }
                 END { for (f in last) print last[f], f, (f in asked) ? asked[f] : 0, prev[f], reads[f] }' "$T/ask.log" |
            sort -n | awk 'NR > 1 { if (!($3 > pprev && $3 < plast)) bad = bad " " $2 } { plast = $1; pprev = $4 }
                           END { print NR, (bad == "" ? "ok" : "late:" bad) }')
  [ "$out" = "${want%$'\n'}" ] && [ "$verdict" = "8 ok" ] && [ "$(grep -c "pread64 $d/b1\$" "$T/ask.log")" = 2 ] &&
    ok "hdd sweep: the next file asked for while the last chunk of the one before is read" ||
    not_ok "hdd sweep: next file not asked for ahead ($verdict)" "$out" "$(cat "$T/ask.log")"
}

# hdd mode's first pass reads on through a file that lies where the disk
# passes anyway on its way to the next one it reads (ext4 lays files written
# one after another side by side): so the sweep finds each copy's bytes in
# the page cache, and such a file is read whole in one pass forward, never
# sought back to. (A file lying more than 1 MiB from the next is read as
# before: its head, and whole by the sweep if a copy.) A library of 48
# files of 150 to 230 KB, of six sizes (a head of 128 KiB is most of each,
# few are alike), with three pairs of copies of sizes of their own among
# them (groups the sweep reads whole, not their heads first), and a card
# of 8 copies of library files, 4 pairs of its own and 4 others, written
# after it. The block layer's requests for the files' data are traced
# (tracefs).
reads_on() { # DIR on the ext4 image, its loop device
  local d=$1 dev=$2 i
  mkdir -p "$d/lib" "$d/card"
  python3 - "$d" <<'PY'
import random, sys
rng = random.Random(70)
top = sys.argv[1]
sizes = [150_000 + 16_001 * k for k in range(6)]
lib = []
for i in range(48):
    data = rng.randbytes(sizes[i % 6])
    open(f"{top}/lib/f{i:02d}", "wb").write(data)
    lib.append(data)
    if i % 16 == 7:
        pair = rng.randbytes(200_000 + i)
        open(f"{top}/lib/p{i:02d}a", "wb").write(pair)
        open(f"{top}/lib/p{i:02d}b", "wb").write(pair)
card = [lib[i] for i in rng.sample(range(48), 8)]
for _ in range(4):
    data = rng.randbytes(rng.choice(sizes))
    card += [data, data]
card += [rng.randbytes(rng.choice(sizes)) for _ in range(4)]
for i, data in enumerate(card):
    open(f"{top}/card/c{i:02d}", "wb").write(data)
PY
  sync; evict "$d"
  python3 "$BLOCKTRACE" run "$dev" "$T/ro.out" -- "$DUPSCAN" -rq --io=hdd "$d/lib" "$d/card" > "$T/ro.trace"
  local brc=$?
  if [ "$brc" = 77 ]; then
    ok "# SKIP no tracefs here"
  else
    local sets got
    sets=$(grep -c '^$' "$T/ro.out")
    # shellcheck disable=SC2046
    got=$(python3 "$BLOCKTRACE" order "$T/ro.trace" $(find "$d/lib" "$d/card" -type f | sort | sed 's|^\(.*/p[0-9]*[ab]\)$|=\1|'))
    [ "$brc" = 0 ] && [ "$sets" = 15 ] && [ "${got%% (*}" = forward ] &&
      ok "hdd: files lying side by side read whole in one pass forward, the sweep's copies from the page cache: $got" ||
      not_ok "hdd: reading on through the files" "rc $brc, $sets sets (want 15)" "$got"
  fi
  run "$DUPSCAN" --io=ssd -rq "$d/lib" "$d/card"; local o1=$out
  run "$DUPSCAN" --io=hdd -rq "$d/lib" "$d/card"
  [ "$out" = "$o1" ] && [ -n "$out" ] && ok "reading on: hdd's sets are ssd's" || not_ok "reading on: hdd/ssd differ" "$o1" "$out"
  rm -r "$d"
}

# two disks in one scan are read at the same time, each by one stream, in
# every phase: the shim logs which thread reads which file, each read taking
# 5 ms. Beside the first pass's small files (f*), each disk holds
#   c1-c6: copies of the other disk's c1-c6, of six sizes (the sweep alone
#          reads them, meeting in memory);
#   t1-t3: 16 MiB and a byte, of one size and head, differing from the other
#          disk's only in their last byte (the first pass, then last blocks);
#   s1-s3: 400 kB of one size, head and last block: s1 and s2 copies of the
#          other disk's, s3 unlike it in the middle only (the first pass,
#          three rounds of a split, then the sweep);
#   b1-b3: 3 MB copies of the other disk's, of three sizes: with
#          --io-memory=1M too large for the sweep, compared side by side.
two_disks_tree() {
  local d i
  for d in dsk1 dsk2; do
    for i in $(seq 1 12); do { printf '%s %d' "$d" $((i % 6)); head -c 8000 /dev/zero; } > "$d/f$i"; done
    for i in 1 2 3 4 5 6; do { printf 'copy %d' "$i"; head -c $((300000 + i)) /dev/zero; } > "$d/c$i"; done
    for i in 1 2 3; do
      { head -c $((16 * 1024 * 1024)) /dev/zero; printf '%s' "${d#dsk}$i"; } > "$d/t$i"
      { head -c 350000 /dev/zero; printf '%s' "$i"; [ "$i$d" = 3dsk2 ] && printf 'x' || printf 'y'
        head -c 49998 /dev/zero; } > "$d/s$i"
      { printf 'big %d' "$i"; head -c $((3000000 + i)) /dev/zero; } > "$d/b$i"
    done
  done
  sync
}

# disk_lanes CLASS PHASE_SIZES...: in the shim's log, the reads of files
# CLASS* cut into phases of so many reads: in each, both disks read, by
# different threads, and (six reads or more) each disk's not all before the
# other's
disk_lanes() {
  local class=$1 lines from=1 n; shift
  lines=$(grep -E " dsk[12]/$class[0-9]+\$" "$T/reads.log")
  for n in "$@"; do
    local part t1 t2 sw
    part=$(printf '%s\n' "$lines" | sed -n "${from},$((from + n - 1))p")
    t1=$(printf '%s\n' "$part" | grep " dsk1/" | cut -d' ' -f1 | sort -u)
    t2=$(printf '%s\n' "$part" | grep " dsk2/" | cut -d' ' -f1 | sort -u)
    sw=$(printf '%s\n' "$part" | sed 's,.* \(dsk[12]\)/.*,\1,' | uniq | wc -l)
    if [ "$(printf '%s\n' "$part" | grep -c .)" != "$n" ] || [ -z "$t1" ] || [ -z "$t2" ] ||
       { [ "$n" -ge 6 ] && [ "$sw" -lt 3 ]; } ||
       [ -n "$(comm -12 <(printf '%s\n' "$t1") <(printf '%s\n' "$t2"))" ]; then
      not_ok "two disks, $class files, reads $from-$((from + n - 1)): not one thread a disk at once" "$part"
      return
    fi
    from=$((from + n))
  done
  ok "two disks, $class files: each phase reads both disks at once, one thread each ($*)"
}

two_disks() {
  local i d loops=() ok2=1
  mkdir -p dk && mount -t tmpfs -o size=240m none dk 2>/dev/null || { ok "# SKIP no tmpfs for two disks"; return; }
  for d in dsk1 dsk2; do
    truncate -s 90M "dk/$d.img" && mkfs.ext4 -q -F "dk/$d.img" 2>/dev/null && mkdir -p "$d" &&
      loops+=("$(losetup -f --show "dk/$d.img" 2>/dev/null)") && mount "${loops[-1]}" "$d" 2>/dev/null || ok2=0
  done
  if [ "$ok2" = 1 ]; then
    two_disks_tree
    local want
    want=$(printf '%s\n' dsk1/b1 dsk2/b1 '' dsk1/b2 dsk2/b2 '' dsk1/b3 dsk2/b3 '' dsk1/c1 dsk2/c1 '' dsk1/c2 dsk2/c2 '' dsk1/c3 dsk2/c3 '' dsk1/c4 dsk2/c4 '' \
      dsk1/c5 dsk2/c5 '' dsk1/c6 dsk2/c6 '' dsk1/s1 dsk2/s1 '' dsk1/s2 dsk2/s2)
    run "$DUPSCAN" --io=ssd -r dsk1 dsk2; local o1=$out
    evict dsk1; evict dsk2
    run "$DUPSCAN" --io=hdd -r dsk1 dsk2
    [ "$out" = "$o1" ] && [ -n "$out" ] && ok "two disks: hdd output is ssd's" || not_ok "two disks: outputs differ" "$o1" "$out"
    evict dsk1; evict dsk2
    run "$DUPSCAN" --io=hdd --threads=1 -r dsk1 dsk2
    [ "$out" = "$o1" ] && ok "two disks: one disk after the other gives the same" || not_ok "two disks, --threads=1" "$o1" "$out"
    local sets
    sets=$(printf '%s\n' "$o1" | grep -E "/[cstb][0-9]+\$|^\$" | cat -s | sed '/./,$!d')
    [ "$sets" = "$want" ] && ok "two disks: copies across the disks found; pairs unlike in the last byte or the middle not" \
      || not_ok "two disks: sets across the disks" "$sets" "--- want" "$want"
    # buckets of two to four files over both disks, of one to three contents
    # alike in their heads: read at once on both disks, compared in memory,
    # some left for later sweeps (1 MiB kept at most), as one stream would
    python3 - dsk1 dsk2 <<'PY'
import random, sys
r = random.Random(27)
for b in range(40):
    size = 200000 + 1000 * b
    variants = [bytes([65 + v]) * 10 for v in range(r.randint(1, 3))]
    for m in range(r.randint(2, 4)):
        v = r.choice(variants)
        data = bytearray(size)
        data[150000:150010] = v
        with open(f"{sys.argv[1 + r.randint(0, 1)]}/m{b}_{m}", "wb") as f:
            f.write(data)
PY
    sync
    run "$DUPSCAN" --io=ssd -r dsk1 dsk2; o1=$out
    local mem th bad=""
    for mem in 1M 2M 256M; do
      for th in 2 4 1; do
        evict dsk1; evict dsk2
        run "$DUPSCAN" --io=hdd --io-memory=$mem --threads=$th -r dsk1 dsk2
        [ "$out" = "$o1" ] && [ "$rc" = 0 ] || bad="$bad --io-memory=$mem --threads=$th"
      done
    done
    [ -z "$bad" ] && [ "$(printf '%s\n' "$o1" | grep -c '/m[0-9]')" -gt 40 ] &&
      ok "two disks: buckets of mixed contents over both disks, any budget and thread count: ssd's sets" ||
      not_ok "two disks: mixed buckets differ from ssd's with$bad"
  fi
  if [ "$ok2" = 1 ] && [ -n "${FAULT_LIB:-}" ] && [ "${DUPSCAN_THREADS:-yes}" = yes ]; then
    evict dsk1; evict dsk2; rm -f "$T/reads.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:dsk:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" \
      "$DUPSCAN" --io=hdd -r dsk1 dsk2
    [ "$out" = "$o1" ] && ok "two disks, traced: the same sets" || not_ok "two disks, traced" "$out"
    # the heads come first: 24 reads, one thread a disk, interleaved
    local t1 t2 switches
    t1=$(grep -m1 " dsk1/" "$T/reads.log" | cut -d' ' -f1); t2=$(grep -m1 " dsk2/" "$T/reads.log" | cut -d' ' -f1)
    switches=$(head -n 24 "$T/reads.log" | sed 's,.* \(dsk[12]\)/.*,\1,' | uniq | wc -l)
    if [ -n "$t1" ] && [ -n "$t2" ] && [ "$t1" != "$t2" ] && [ "$switches" -ge 3 ] &&
       ! head -n 24 "$T/reads.log" | grep -q "^$t1 dsk2/" && ! head -n 24 "$T/reads.log" | grep -q "^$t2 dsk1/"; then
      ok "two disks are read at once, each by one thread"
    else
      not_ok "two disks: not read at once by a thread each" "$(head -n 24 "$T/reads.log")"
    fi
    # the walk is one stream, argument after argument: dsk2's directories are
    # read ahead on a helper meanwhile (listed by another thread before the
    # walk of dsk1 ends)
    rm -f "$T/stats.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="readdir64:dsk:TRACE" DUPSCAN_FAULT_LOG="$T/stats.log" \
      "$DUPSCAN" --io=hdd -r dsk1 dsk2
    local w1 wl w2
    w1=$(grep -m1 -E " dsk1(/|\$)" "$T/stats.log" | cut -d' ' -f1)
    wl=$(grep -n -E " dsk1(/|\$)" "$T/stats.log" | tail -n 1 | cut -d: -f1)
    w2=$(grep -n -E " dsk2(/|\$)" "$T/stats.log" | grep -v ":$w1 " | head -n 1 | cut -d: -f1)
    [ "$out" = "$o1" ] && [ -n "$w1" ] && [ -n "$w2" ] && [ "$w2" -lt "$wl" ] &&
      ok "two disks: the second argument's directories read ahead while the first is walked" ||
      not_ok "two disks: no read ahead of dsk2 during dsk1's walk" "$(head -n 40 "$T/stats.log")"
    disk_lanes c 12          # the sweep
    disk_lanes t 6 6         # first blocks, last blocks
    disk_lanes s 6 6 6 6 4   # first blocks, three rounds of the split, the sweep
    # too large for the sweep: compared side by side, each turn both disks at once
    evict dsk1; evict dsk2; rm -f "$T/reads.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:dsk:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" \
      "$DUPSCAN" --io=hdd --io-memory=1M -r dsk1 dsk2
    local turns bad=0 k
    turns=$(grep -E " dsk[12]/b[0-9]+\$" "$T/reads.log" | sed -n '7,$p')
    for k in 1 3 5; do
      local two
      two=$(printf '%s\n' "$turns" | sed -n "$k,$((k + 1))p")
      [ "$(printf '%s\n' "$two" | cut -d' ' -f1 | sort -u | wc -l)" = 2 ] &&
        [ "$(printf '%s\n' "$two" | sed 's,.* \(dsk[12]\)/.*,\1,' | sort -u | wc -l)" = 2 ] || bad=1
    done
    [ "$out" = "$o1" ] && [ "$bad" = 0 ] && [ "$(printf '%s\n' "$turns" | grep -c .)" = 6 ] &&
      ok "two disks, b files too large for the sweep: each pair read on both disks at once, a thread each" ||
      not_ok "two disks, side by side: not both disks at once" "$turns"
  else
    ok "# SKIP two loop devices cannot be mounted here, no fault shim, or no threads"
  fi
  [ "$ok2" = 1 ] && three_disks
  for d in dsk1 dsk2 dsk3; do umount "$d" 2>/dev/null; done
  for d in "${loops[@]}"; do [ -n "$d" ] && losetup -d "$d"; done
  umount dk
}

# a third disk beside them: each x file has a copy on each of the three
# disks; each disk is read by a thread of its own, the third while the other
# two are still being read
three_disks() {
  local i d
  truncate -s 30M dk/dsk3.img && mkfs.ext4 -q -F dk/dsk3.img 2>/dev/null && mkdir -p dsk3 &&
    loops+=("$(losetup -f --show dk/dsk3.img 2>/dev/null)") && mount "${loops[-1]}" dsk3 2>/dev/null ||
    { ok "# SKIP no third loop device"; return; }
  for i in 1 2 3 4 5 6; do
    for d in dsk1 dsk2 dsk3; do { printf 'three %d' "$i"; head -c $((250000 + i)) /dev/zero; } > "$d/x$i"; done
  done
  sync
  run "$DUPSCAN" --io=ssd -r dsk1 dsk2 dsk3; local o1=$out
  evict dsk1; evict dsk2; evict dsk3
  run "$DUPSCAN" --io=hdd -r dsk1 dsk2 dsk3
  [ "$out" = "$o1" ] && [ "$(printf '%s\n' "$out" | grep -c '/x[1-6]$')" = 18 ] &&
    ok "three disks: hdd output is ssd's" || not_ok "three disks: outputs differ" "$o1" "$out"
  if [ -n "${FAULT_LIB:-}" ] && [ "${DUPSCAN_THREADS:-yes}" = yes ]; then
    evict dsk1; evict dsk2; evict dsk3; rm -f "$T/reads.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:dsk:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" \
      "$DUPSCAN" --io=hdd -r dsk1 dsk2 dsk3
    local x t1 t2 t3
    x=$(grep -E " dsk[123]/x[0-9]+\$" "$T/reads.log")
    t1=$(printf '%s\n' "$x" | grep " dsk1/" | cut -d' ' -f1 | sort -u)
    t2=$(printf '%s\n' "$x" | grep " dsk2/" | cut -d' ' -f1 | sort -u)
    t3=$(printf '%s\n' "$x" | grep " dsk3/" | cut -d' ' -f1 | sort -u)
    [ "$(printf '%s\n' "$x" | grep -c .)" = 18 ] && [ "$(printf '%s\n' "$t1" "$t2" "$t3" | sort -u | grep -c .)" = 3 ] &&
      [ "$(grep -n " dsk3/x" "$T/reads.log" | head -n 1 | cut -d: -f1)" -lt "$(grep -n " dsk1/" "$T/reads.log" | tail -n 1 | cut -d: -f1)" ] &&
      [ "$(grep -n " dsk3/x" "$T/reads.log" | head -n 1 | cut -d: -f1)" -lt "$(grep -n " dsk2/" "$T/reads.log" | tail -n 1 | cut -d: -f1)" ] &&
      ok "three disks: each read by a thread of its own, all three at once" ||
      not_ok "three disks: not a thread a disk at once" "$x"
  fi
}

# a spinning disk beside memory, as auto mode sees them: a loop device
# marked rotational whose image lies where storage cannot be told (this
# machine's disk), and tmpfs; copies across them are found as with --io=ssd
disk_beside_memory() {
  local L i img
  # (the image on the disk, even when the test's tree is on tmpfs: storage
  # follows a loop device to its image's filesystem, and tmpfs is memory)
  img=$(mktemp "${TMPDIR:-/tmp}/dupscan-rot-XXXXXX.img") && truncate -s 24M "$img" && mkfs.ext4 -q -F "$img" 2>/dev/null &&
    L=$(losetup -f --show "$img" 2>/dev/null) || { rm -f "$img"; ok "# SKIP no loop device for a disk beside memory"; return; }
  if echo 1 > "/sys/block/${L#/dev/}/queue/rotational" 2>/dev/null && mkdir -p rot mem && mount "$L" rot 2>/dev/null &&
     mount -t tmpfs -o size=16m none mem 2>/dev/null; then
    for i in 1 2 3 4; do
      { printf 'beside %d' "$i"; head -c $((200000 + i)) /dev/zero; } > "rot/y$i"
      cp "rot/y$i" "mem/y$i"
    done
    { printf 'beside 5'; head -c 200005 /dev/zero; } > rot/y5; { printf 'beside X'; head -c 200005 /dev/zero; } > mem/y5
    sync; evict rot
    if [ "$(stat -f -c %T mem)" = tmpfs ] && [ "$(stat -f -c %T rot)" != tmpfs ] &&
       case "$(script -qec "'$DUPSCAN' -r rot mem" /dev/null 2>/dev/null)" in *"Progress ["*"(hdd"*) true ;; *) false ;; esac; then
      run "$DUPSCAN" --io=ssd -r rot mem; local o1=$out
      evict rot
      run "$DUPSCAN" -r rot mem
      [ "$out" = "$o1" ] && [ "$(printf '%s\n' "$out" | grep -c '/y[1-4]$')" = 8 ] &&
        ok "a spinning disk beside memory: auto reads as hdd, the sets are ssd's" ||
        not_ok "a disk beside memory: outputs differ" "$o1" "$out"
    else
      ok "# SKIP the loop device does not read as a spinning disk here"
    fi
  else
    ok "# SKIP a loop device cannot be marked rotational and mounted here"
  fi
  umount mem 2>/dev/null; umount rot 2>/dev/null; losetup -d "$L"; rm -f "$img"
}

# two partitions of one disk are one stream: one thread reads both (two
# threads would make the one head seek between them)
two_partitions() {
  local L n ok2=1 i d
  mkdir -p pk && mount -t tmpfs -o size=80m none pk 2>/dev/null || { ok "# SKIP no tmpfs for a partitioned disk"; return; }
  python3 - pk/disk.img <<'PY'
import struct, sys
mbr = bytearray(512)
for k, start in enumerate((1, 32)):   # two partitions of 31 MiB
    mbr[446 + 16 * k:462 + 16 * k] = struct.pack('<B3sB3sII', 0, bytes(3), 0x83, bytes(3), start * 2048, 31 * 2048)
mbr[510:512] = b'\x55\xaa'
with open(sys.argv[1], 'wb') as f:
    f.write(mbr)
    f.truncate(64 << 20)
PY
  if L=$(losetup -f --show pk/disk.img 2>/dev/null) && partx -a "$L" 2>/dev/null; then
    for n in 1 2; do
      d=$(cat "/sys/block/${L#/dev/}/${L#/dev/}p$n/dev" 2>/dev/null) && mknod "pk/p$n" b "${d%:*}" "${d#*:}" &&
        mkfs.ext4 -q -F "pk/p$n" 2>/dev/null && mkdir -p "part$n" && mount "pk/p$n" "part$n" 2>/dev/null || ok2=0
    done
  else
    ok2=0
  fi
  if [ "$ok2" = 1 ] && [ -n "${FAULT_LIB:-}" ] && [ "${DUPSCAN_THREADS:-yes}" = yes ]; then
    for i in 1 2 3 4 5 6; do
      for d in part1 part2; do { printf 'copy %d' "$i"; head -c $((300000 + i)) /dev/zero; } > "$d/c$i"; done
    done
    sync; evict part1; evict part2; rm -f "$T/reads.log"
    run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:part:TRACE" DUPSCAN_FAULT_LOG="$T/reads.log" \
      "$DUPSCAN" --io=hdd -r part1 part2
    local threads
    threads=$(cut -d' ' -f1 "$T/reads.log" | sort -u | wc -l)
    [ "$(printf '%s\n' "$out" | grep -c '/c[1-6]$')" = 12 ] && [ "$threads" = 1 ] &&
      [ "$(grep -c . "$T/reads.log")" = 12 ] &&
      ok "two partitions of one disk: one stream, one thread reads both" ||
      not_ok "two partitions of one disk: read by $threads threads" "$out" "$(cat "$T/reads.log")"
  else
    ok "# SKIP a partitioned loop device cannot be made here, no fault shim, or no threads"
  fi
  for d in part1 part2; do umount "$d" 2>/dev/null; done
  [ -n "${L:-}" ] && { partx -d "$L" 2>/dev/null; losetup -d "$L"; }
  umount pk
}

# real mounts (as root): tmpfs is memory and has no FIEMAP (inode order
# stands in); a loop device is what holds its image, whatever it says itself
if [ "$(id -u)" = 0 ] && mkdir -p mnt && mount -t tmpfs -o size=96m none mnt 2>/dev/null; then
  tree mnt/t
  compare_modes "tmpfs" mnt/t
  expect_err_io "auto on tmpfs reads as on an SSD" ssd mnt/t
  if command -v mkfs.ext4 >/dev/null && truncate -s 32M mnt/img && mkfs.ext4 -q -F mnt/img 2>/dev/null \
     && loop=$(losetup -f --show mnt/img 2>/dev/null); then
    if echo 1 > "/sys/block/${loop#/dev/}/queue/rotational" 2>/dev/null && mkdir -p disk && mount "$loop" disk 2>/dev/null; then
      tree disk/t
      compare_modes "ext4 on a loop device" disk/t
      expect_err_io "auto: a loop device marked rotational whose image is in memory reads as on an SSD" ssd disk/t
      sweep_order disk/w
      tail_check disk/tl
      sweep_asks_ahead disk/aa
      reads_on disk/ro "$loop"
      wide_big disk/wb
      umount disk
      two_disks
      two_partitions
      disk_beside_memory
    else
      ok "# SKIP a loop device cannot be marked rotational and mounted here"
    fi
    losetup -d "$loop"
  else
    ok "# SKIP no loop device here"
  fi
  umount mnt
else
  ok "# SKIP tmpfs cannot be mounted here"
fi

for bad in 512K 0 2T 1X -1M ''; do
  run "$DUPSCAN" --io-memory="$bad" -r t
  [ "$rc" = 2 ] && expect_err "--io-memory=$bad: usage error naming it" "invalid size '$bad' for --io-memory" \
    || not_ok "--io-memory=$bad" "$rc" "$err"
done
run "$DUPSCAN" --io=hdd --io-memory=1M -r t; o1=$out
run "$DUPSCAN" --io=ssd -r t
[ "$o1" = "$out" ] && [ -n "$out" ] && ok "--io-memory=1M: the same sets" || not_ok "--io-memory=1M" "$o1" "$out"

run "$DUPSCAN" --io=tape -r t
[ "$rc" = 2 ] && expect_err "--io=tape: usage error naming it" "invalid value 'tape' for --io" || not_ok "--io=tape" "$rc" "$err"
done_testing
