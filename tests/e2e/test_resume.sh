#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# A first scan with --cache survives a kill: what it proved goes to
# CACHE.log as it goes, and a run after a SIGKILL (the fault shim's KILL at
# the Nth read) takes it. Whatever the moment of the kill, the cache on disk
# is the old one or a new one, never torn; the resumed run (--cache-trust)
# prints the sets of an uninterrupted run; killed at about half of its
# bytes, it reads what was left and what the log had not taken yet (see
# below: 60% of an uninterrupted run at the issue's scale); and once
# it has saved the cache, the log is gone. A damaged log is skipped.
. "$(dirname "$0")/../fixtures/lib.sh"
if [ -z "${FAULT_LIB:-}" ]; then
  ok "# SKIP no fault shim"
  done_testing
fi

# one size group (its whole matching a single commit): 96 pairs and 16
# files alone in their content, 256 KiB each (48 MiB: the log is written
# every 4 MiB read), each copy written right after its original (so that in
# hdd mode's disk order it comes next: copies far apart, an archive and its
# backup, are proven only when the second is read); two small pairs of
# their own sizes
python3 - <<'PY'
import os, random
random.seed(7)
os.makedirs("t/sub")
for i in range(96):
    data = random.randbytes(262144)
    for name in ("t/p%02d" % i, "t/q%02d" % i):
        open(name, "wb").write(data)
for i in range(16):
    open("t/u%d" % i, "wb").write(random.randbytes(262144))
for name in ("t/s1", "t/sub/s2"):
    open(name, "w").write("small pair\n")
for name in ("t/m1", "t/sub/m2"):
    open(name, "w").write("another, longer small pair\n")
# one bucket of large sparse files, compared side by side for long enough to
# log checkpoints: a, b, c equal; d unlike them at 88 MiB, e at 8 MiB; f, g
# equal, unlike a at 16 MiB
os.makedirs("big")
head = random.randbytes(4096)
for name, at in (("a", None), ("b", None), ("c", None), ("d", 88), ("e", 8), ("f", 16), ("g", 16)):
    with open("big/" + name, "wb") as f:
        f.write(head)
        if at:
            f.seek(at << 20)
            f.write(b"unlike a from here")
        f.truncate(96 << 20)
PY
# a proof holds only for files older than the proving run by more than 2 s
# (--cache-trust's racy rule): let the tree age before the first kill
sleep 3
run "$DUPSCAN" -r t; plain=$out

# a run, its reads counted by the shim: $n
reads() { # ARGS...
  rm -f reads.log
  run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/:LOG" DUPSCAN_FAULT_LOG="$T/reads.log" "$DUPSCAN" "$@"
  n=0
  [ -e reads.log ] && n=$(grep -c . reads.log)
}
# is CACHE absent, or a cache that loads without a word? (a copy is read,
# beside no log)
mkdir -p empty
loads() {
  [ ! -e "$1" ] && return 0
  rm -f probe.bin probe.bin.log; cp "$1" probe.bin
  local o; o=$("$DUPSCAN" -rq --cache=probe.bin empty 2>&1 >/dev/null)
  [ -z "$o" ]
}
for io in ssd hdd; do
  rm -f c.bin c.bin.log
  reads --io=$io -r --cache=c.bin t; full=$n
  [ "$out" = "$plain" ] && [ -s c.bin ] && [ ! -e c.bin.log ] &&
    ok "--io=$io: an uninterrupted run ($full reads) saves the cache and leaves no log" ||
    not_ok "--io=$io: uninterrupted run" "$out" "$err" "$(ls -l)"
  all=$(bytes "$DUPSCAN" --io=$io -r t)
  bad="" half="" k=$((full / 2)) killed=0
  # the read at which half the bytes are read: the first blocks are many
  # small reads (in hdd mode, heads of 128 KiB), the rest fewer and larger
  while [ "$killed" -lt $((all * 45 / 100)) ] && [ "$k" -lt "$full" ]; do
    rm -f c.bin c.bin.log
    killed=$(bytes env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/:KILL@$k" "$DUPSCAN" --io=$io -r --cache=c.bin t)
    k=$((k + full / 40 + 1))
  done
  mid=$((k - full / 40 - 1))
  # (KILL_LOOPS set, as in the suite's lighter legs: fewer points)
  points="1 $((full / 4)) $mid $((full * 3 / 4)) $((full - 1)) $((RANDOM % full + 1))"
  [ -n "${KILL_LOOPS:-}" ] && points="$mid $((RANDOM % full + 1))"
  for k in $points; do
    rm -f c.bin c.bin.log
    killed=$(bytes env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/:KILL@$k" "$DUPSCAN" --io=$io -r --cache=c.bin t)
    loads c.bin || bad="$bad kill@$k:cache-torn"
    cp c.bin.log kept.log 2>/dev/null
    again=$(bytes "$DUPSCAN" --io=$io -r --cache=c.bin --cache-trust t)
    [ -e kept.log ] && mv kept.log c.bin.log # once more, for the sets
    run "$DUPSCAN" --io=$io -r --cache=c.bin --cache-trust t
    [ "$out" = "$plain" ] && [ -z "$err" ] || bad="$bad kill@$k:sets"
    [ ! -e c.bin.log ] && loads c.bin || bad="$bad kill@$k:log-left"
    # killed at about half of its bytes: the next run reads what was left
    # and at most what the log had not taken yet: up to 4 MiB read since
    # it was last written, and the files being read at the kill (4 MiB
    # more) - on the issue's corpus of 1.7 GB, killed half way, that is
    # the 60% it asks for; on this 48 MiB tree the log's step is 8% of the
    # run, and a kill just before it re-reads that much (killed at 45%,
    # 67% read again, killed at 48%, 57%: measured). In hdd mode less than
    # all: the heads of the files not yet proven, a third of these bytes,
    # are read again.
    if [ "$killed" -ge $((all * 45 / 100)) ] && [ "$killed" -le $((all * 55 / 100)) ]; then
      half="$half $((again * 100 / all))%"
      most=$((all - killed + 8 * 1048576)); [ "$io" = hdd ] && most=$((all * 90 / 100))
      [ "$again" -le "$most" ] || bad="$bad kill@$k:read-$again-of-$all-killed-at-$killed"
    fi
  done
  [ -z "$bad" ] && ok "--io=$io: killed at $(echo $points | wc -w) points, resumed with the same sets (killed half way, read again:${half:- no kill half way})" ||
    not_ok "--io=$io: kill and resume" "$bad"
done

# the files a killed run told apart by their first blocks (u0..u15) are not
# read again by the resumed run
rm -f c.bin c.bin.log reads.log
"$DUPSCAN" -r --io=ssd t > /dev/null
env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/:KILL@$((full * 3 / 4))" "$DUPSCAN" --io=ssd -r --cache=c.bin t > /dev/null 2>&1
run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/u:LOG" DUPSCAN_FAULT_LOG="$T/reads.log" "$DUPSCAN" --io=ssd -r --cache=c.bin --cache-trust t
[ "$out" = "$plain" ] && [ ! -s reads.log ] && ok "killed at 3/4: the files its first blocks told apart are not read again" ||
  not_ok "unique files read again" "$(sort -u reads.log 2>/dev/null | head)"

# a kill in the middle of a long comparison: resumed from its last
# checkpoint (every 32 MiB read), each group's hash rebuilt from one file
bigplain=$("$DUPSCAN" -r --io=ssd big)
rm -f reads.log
env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:big/:LOG" DUPSCAN_FAULT_LOG="$T/reads.log" "$DUPSCAN" -r --io=ssd --cache=k.bin big > /dev/null
nbig=$(grep -c . reads.log)
allbig=$(bytes "$DUPSCAN" -r --io=ssd big)
bad=""
for k in $((nbig / 4)) $((nbig / 2)) $((nbig * 3 / 4)); do
  rm -f k.bin k.bin.log
  killed=$(bytes env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:big/:KILL@$k" "$DUPSCAN" -r --io=ssd --cache=k.bin big)
  [ -s k.bin.log ] || bad="$bad kill@$k:no-log"
  cp k.bin.log kept.log
  again=$(bytes "$DUPSCAN" -r --io=ssd --cache=k.bin --cache-trust big)
  mv kept.log k.bin.log
  run "$DUPSCAN" -r --io=ssd --cache=k.bin --cache-trust big
  [ "$out" = "$bigplain" ] && [ -z "$err" ] || bad="$bad kill@$k:sets"
  # what was left, and once the bytes before the checkpoint of one file a
  # group (a, b, c, d and f, g: a third of what was read; without the
  # checkpoints, all of it)
  [ "$again" -le $((allbig - killed + killed / 2)) ] || bad="$bad kill@$k:read-$again-of-$allbig-killed-at-$killed"
  [ "$k" = $((nbig / 2)) ] && resumed="killed at $((killed * 100 / allbig))%, read $((again * 100 / allbig))%"
done
[ -z "$bad" ] && ok "a long comparison killed at 3 points goes on from its checkpoint: the same sets ($resumed)" ||
  not_ok "resumed comparison" "$bad"
# killed as the bucket's proofs were being logged: the log cut right after the
# first file's (its class's others still in play); that file is no file alone
rm -f k.bin k.bin.log
env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="rename:k.bin:KILL" "$DUPSCAN" -r --io=ssd --cache=k.bin big > /dev/null 2>&1
rm -f k.bin.tmp*
python3 -c 'import struct, sys
d = open(sys.argv[1], "rb").read()
for i in range(len(d) // 88):
    size, flags = struct.unpack_from("<Q", d, i * 88 + 16)[0], struct.unpack_from("<I", d, i * 88 + 72)[0]
    if size == 96 << 20 and flags & 2 and not flags & 16:  # proven, in a class
        open(sys.argv[1], "wb").write(d[:(i + 1) * 88]); break' k.bin.log
run "$DUPSCAN" -r --io=ssd --cache=k.bin --cache-trust big
[ "$out" = "$bigplain" ] && [ -z "$err" ] && ok "the log cut inside a bucket's proofs: the same sets" || not_ok "cut proofs" "$out" "$err"
# a file in play rewritten since (its size and mtime put back): read again, not trusted
rm -f k.bin k.bin.log
env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:big/:KILL@$((nbig / 2))" "$DUPSCAN" -r --io=ssd --cache=k.bin big > /dev/null 2>&1
python3 -c 'import os
st = os.stat("big/c"); fd = os.open("big/c", os.O_WRONLY); os.pwrite(fd, b"written since", 95 << 20); os.close(fd)
os.utime("big/c", ns=(st.st_atime_ns, st.st_mtime_ns))'
run "$DUPSCAN" -r --io=ssd --cache=k.bin --cache-trust big
[ "$out" = "$("$DUPSCAN" -r --io=ssd big)" ] && ! grep -qx big/c <<< "$out" && grep -qx big/b <<< "$out" &&
  ok "a file in play rewritten since the kill (ctime moved): compared again, not in the set" || not_ok "rewritten in play" "$out" "$err"

# a kill while the cache is saved: its rename, then the log's removal
rm -f c.bin c.bin.log
run "$DUPSCAN" -r --cache=c.bin t
cp c.bin old.bin
printf 'one more pair\n' > t/n1; printf 'one more pair\n' > t/sub/n2
run "$DUPSCAN" -r t; plain=$out
run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="rename:c.bin:KILL" "$DUPSCAN" -r --cache=c.bin t
if [ "$rc" = 137 ] && cmp -s c.bin old.bin && [ -s c.bin.log ]; then
  ok "killed at the cache's rename: the old cache stands, the log holds the run"
else
  not_ok "kill at rename" "$rc" "$(ls -l)"
fi
rm -f c.bin.tmp*
run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="unlink:c.bin.log:KILL" "$DUPSCAN" -r --cache=c.bin t
if [ "$rc" = 137 ] && loads c.bin && ! cmp -s c.bin old.bin && [ -e c.bin.log ]; then
  ok "killed as the log goes: the new cache is saved whole"
else
  not_ok "kill at the log's removal" "$rc" "$(ls -l)"
fi
run "$DUPSCAN" -r --cache=c.bin --cache-trust t
[ "$out" = "$plain" ] && [ -z "$err" ] && [ ! -e c.bin.log ] && ok "the run after: the same sets, the log folded" ||
  not_ok "after the save's kill" "$out" "$err"

# a damaged log: a torn record and bytes of nothing, skipped without a word
rm -f c.bin c.bin.log
run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/:KILL@$((full * 3 / 4))" "$DUPSCAN" -r --cache=c.bin t
if [ -s c.bin.log ]; then
  head -c 50 /dev/urandom >> c.bin.log
  python3 -c 'import sys; d = bytearray(open(sys.argv[1], "rb").read()); d[20] ^= 0xff; open(sys.argv[1], "wb").write(d)' c.bin.log
  run "$DUPSCAN" -r --cache=c.bin --cache-trust t
  [ "$rc" = 0 ] && [ "$out" = "$plain" ] && [ -z "$err" ] && [ ! -e c.bin.log ] &&
    ok "a log with a flipped byte and a torn end: bad records skipped, the same sets" ||
    not_ok "damaged log" "$rc" "$out" "$err"
else
  not_ok "no log after a kill three quarters of the way" "$(ls -l)"
fi
# --cache-clear removes the log too
run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:t/:KILL@$((full / 2))" "$DUPSCAN" -r --cache=c.bin t
run "$DUPSCAN" --cache=c.bin --cache-clear
[ "$rc" = 0 ] && [ ! -e c.bin ] && [ ! -e c.bin.log ] && ok "--cache-clear removes the log too" ||
  not_ok "--cache-clear and the log" "$rc" "$err" "$(ls -l)"
done_testing
