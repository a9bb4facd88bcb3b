#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HOST:PATH arguments through a fake remote shell that runs "dupscan --server"
# here (the host dropped): the sets equal a local scan's, actions change local
# files only, and a peer that is no server, another version, a dead or a
# silent one fails the run, naming the host, before any action.
. "$(dirname "$0")/../fixtures/lib.sh"

cat > "$T/rsh" <<'SH'
#!/bin/sh
shift
exec sh -c "$*"
SH
chmod +x "$T/rsh"
R=(--rsh="$T/rsh" --remote-dupscan="$DUPSCAN")

mk() {
  rm -rf "$T/A" "$T/B" "$T/out"; mkdir -p "$T/A/sub" "$T/B/x" "$T/out"
  head -c 300000 /dev/urandom > "$T/A/big"; cp "$T/A/big" "$T/A/sub/big2"; cp "$T/A/big" "$T/B/x/big3"
  head -c 5000 /dev/urandom > "$T/B/r1"; cp "$T/B/r1" "$T/B/x/r2"
  echo same > "$T/A/s"; echo same > "$T/B/s2"
  # differ at the end: d2's last byte is d1's plus one (a fixed 'z' was d1's own one time in 256)
  head -c 70000 /dev/urandom > "$T/A/d1"
  { head -c 69999 "$T/A/d1"; tail -c 1 "$T/A/d1" | tr '\000-\377' '\001-\377\000'; } > "$T/B/d2"
  head -c 4096 "$T/A/d1" > "$T/A/h1"; { head -c 4096 "$T/A/d1"; } > "$T/B/h2"                 # one block, equal
  echo only > "$T/A/u"; echo other > "$T/B/v"
  ln -s /etc/hostname "$T/B/out-link"; ln -s "$T/out" "$T/B/outdir"; echo same > "$T/out/s3"
}
# the sets, each sorted, as lines of space-joined paths, HOST: dropped
sets() { python3 -c '
import sys
sets = [s for s in sys.stdin.read().split("\n\n") if s.strip()]
out = sorted(" ".join(sorted(p.removeprefix("localhost:") for p in s.split("\n") if p)) for s in sets)
print("\n".join(out))'; }

mk
run "$DUPSCAN" -rq "$T/A" "$T/B"; want=$(echo "$out" | sets)
run "$DUPSCAN" -rq "${R[@]}" "$T/A" "localhost:$T/B"; got=$(echo "$out" | sets)
[ "$rc" = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] && ok "sets over localhost:B equal a local scan of A B" ||
  not_ok "sets across hosts" "rc $rc" "--- got" "$got" "--- want" "$want" "$err"
grep -q "^localhost:$T/B/x/big3\$" <<< "$out" && ok "remote files print as HOST:PATH" || not_ok "HOST:PATH" "$out"
! grep -q "out/s3\|hostname" <<< "$out" && ok "the server does not follow symlinks out of its root (no -s)" || not_ok "symlinks" "$out"
run "$DUPSCAN" -rq "${R[@]}" "localhost:$T/B" "$T/A"; got=$(echo "$out" | sets)
[ "$got" = "$want" ] && ok "remote argument first: the same sets" || not_ok "remote first" "$got"
run "$DUPSCAN" -rq "${R[@]}" "localhost:$T/A" "localhost:$T/B"; got=$(echo "$out" | sets)
[ "$got" = "$want" ] && ok "two remote sides at once: the same sets (compared through both channels)" || not_ok "two remotes" "$got" "$err"

# a file as the remote argument, by a bare name there (its working directory)
run sh -c "cd '$T/B' && '$DUPSCAN' -q --rsh='$T/rsh' --remote-dupscan='$DUPSCAN' '$T/A/s' localhost:s2"
[ "$out" = "$(printf '%s\n%s' "$T/A/s" "localhost:./s2")" ] && ok "a remote file argument, a bare name there" || not_ok "remote file arg" "$out" "$err"

# -u: unique files of both hosts; -m; -S; -j's host field; -I
run "$DUPSCAN" -rqu "${R[@]}" "$T/A" "localhost:$T/B"
[ "$(echo "$out" | sort)" = "$(printf '%s\n' "$T/A/d1" "$T/A/u" "localhost:$T/B/d2" "localhost:$T/B/v" | sort)" ] &&
  ok "-u lists the unique files of both hosts" || not_ok "-u" "$out" "$err"
run "$DUPSCAN" -rqm "${R[@]}" "$T/A" "localhost:$T/B"
[ "$(head -1 <<< "$out")" = "5 duplicate files (in 4 sets), occupying 609 KB" ] && ok "-m across hosts" || not_ok "-m" "$out"
# the channel carried the cross-host candidates' bytes (B/x/big3 300000, B/h2 4096, B/s2 5; B/d2 70000 differs
# in its whole hash and never moves) and about 64 bytes a remote file more
read -r got_in _ <<< "$(sed -n 2p <<< "$out")"
[ "$got_in" -ge 304101 ] && [ "$got_in" -le $((304101 + 64 * 8)) ] && ok "-m: bytes through the channel within the bound ($got_in)" ||
  not_ok "channel bytes" "$out"
run "$DUPSCAN" -rqS "${R[@]}" "$T/A" "localhost:$T/B"
grep -q "^300000 bytes each:" <<< "$out" && ok "-S across hosts" || not_ok "-S" "$out"
run "$DUPSCAN" -rqj "${R[@]}" "$T/A" "localhost:$T/B"
grep -q "\"filePath\": \"localhost:$T/B/x/big3\", \"host\": \"localhost\"" <<< "$out" && ok "-j: a host field" || not_ok "-j" "$out"
# --format=csv: the hash of a copy on this host; a set all there: empty, no error
run "$DUPSCAN" -rq --format=csv "${R[@]}" -O "localhost:$T/B" "$T/A"
big=$("$DUPSCAN" -rq --format=csv "$T/A" "$T/B" | grep "^300000," | cut -d, -f2)
[ "$rc" = 0 ] && [ -z "$err" ] && grep -q "^300000,$big,3,localhost:$T/B/x/big3," <<< "$out" && grep -q "^5000,,2,localhost:" <<< "$out" &&
  ok "--format=csv: a remote kept file's hash read from its copy here; a set all there: an empty hash" || not_ok "csv" "rc $rc" "$out" "$err"
run "$DUPSCAN" -rqI "$T/A" "$T/B"; wantI=$(echo "$out" | sets)
run "$DUPSCAN" -rqI "${R[@]}" "$T/A" "localhost:$T/B"; got=$(echo "$out" | sets)
[ -n "$got" ] && [ "$got" = "$wantI" ] && ! grep -q "sub/big2" <<< "$got" &&
  ok "-I: sets across the arguments only" || not_ok "-I" "$got"
run "$DUPSCAN" -rq "${R[@]}" -X size+:10000 "$T/A" "localhost:$T/B"; got=$(echo "$out" | sets)
[ "$got" = "$T/A/big $T/A/sub/big2 $T/B/x/big3" ] && ok "-X goes to the server too" || not_ok "-X" "$got" "$err"

# --dirs across hosts: directories whose whole content is identical, here and
# there, within there, nested; one with an extra file, one with an empty file
# (equal only with -z): the same sets as a local scan of both
rm -rf "$T/A" "$T/B"; mkdir -p "$T/A/d/sub" "$T/B/p/d/sub" "$T/B/q/d/sub" "$T/B/extra/d/sub" "$T/A/e" "$T/B/e2" "$T/A/z" "$T/B/z2"
head -c 20000 /dev/urandom > "$T/A/d/f"; head -c 30000 /dev/urandom > "$T/A/d/sub/g"
for t in p/d q/d extra/d; do cp "$T/A/d/f" "$T/B/$t/f"; cp "$T/A/d/sub/g" "$T/B/$t/sub/g"; done
echo more > "$T/B/extra/d/more"
echo e > "$T/A/e/x"; : > "$T/A/e/empty"; echo e > "$T/B/e2/x"; : > "$T/B/e2/empty"
echo z > "$T/A/z/x"; echo z > "$T/B/z2/x"; echo zz > "$T/B/z2/locked"; cp "$T/B/z2/locked" "$T/A/z/locked"
for z in "" -z; do
  run "$DUPSCAN" -rq $z --dirs "$T/A" "$T/B"; want=$(echo "$out" | sets)
  run "$DUPSCAN" -rq $z --dirs "${R[@]}" "$T/A" "localhost:$T/B"; got=$(echo "$out" | sets)
  [ "$rc" = 0 ] && grep -q "$T/A/d/ .*$T/B/p/d/ $T/B/q/d/" <<< "$got" && [ "$got" = "$want" ] &&
    ok "--dirs $z across hosts: the same sets as a local scan" || not_ok "--dirs $z" "rc $rc" "--- got" "$got" "--- want" "$want" "$err"
done
mk

# actions change local files only; the remote kept file is re-checked by its server
mk
run "$DUPSCAN" -rq "${R[@]}" -dN --protect="localhost:$T/B" "$T/A" "localhost:$T/B"
[ "$rc" = 0 ] && [ ! -e "$T/A/big" ] && [ ! -e "$T/A/sub/big2" ] && [ ! -e "$T/A/s" ] && [ -e "$T/A/d1" ] &&
  [ -e "$T/B/x/big3" ] && [ -e "$T/B/r1" ] && [ -e "$T/B/x/r2" ] && ok "-dN keeping the remote file deletes the local copies only" ||
  not_ok "-dN remote kept" "rc $rc" "$out" "$err" "$(find "$T/A" "$T/B")"
grep -q "\[+\] localhost:$T/B/x/r2 -- protected\|\[+\] localhost:$T/B/r1" <<< "$out" && ok "a set all on the other host stays whole" || not_ok "remote set" "$out"
# another user's local copy of a file kept on another host: who may read it
# there cannot be told, so it stays (as root, with the nobody user)
if [ "$(id -u)" = 0 ] && getent passwd 65534 >/dev/null; then
  mk; chown 65534 "$T/A/s"
  run "$DUPSCAN" -rq "${R[@]}" -dN --protect="localhost:$T/B" "$T/A" "localhost:$T/B"
  [ "$rc" = 1 ] && [ -e "$T/A/s" ] && [ ! -e "$T/A/big" ] &&
    grep -q "\[!\] $T/A/s -- Another user's, kept on another host" <<< "$out" &&
    ok "-dN: another user's copy of a remote kept file stays, named; the user's own go" ||
    not_ok "-dN: another user's copy, kept remotely" "rc $rc" "$out" "$err"
  run "$DUPSCAN" -rq "${R[@]}" -dN --ignore-access --protect="localhost:$T/B" "$T/A" "localhost:$T/B"
  [ "$rc" = 0 ] && [ ! -e "$T/A/s" ] && ok "... and goes with --ignore-access" || not_ok "--ignore-access remote" "rc $rc" "$out"
fi
mk
run "$DUPSCAN" -rq "${R[@]}" -dN "localhost:$T/B" "$T/A"
[ -e "$T/B/r1" ] && [ -e "$T/B/x/r2" ] && [ -e "$T/B/x/big3" ] && [ -e "$T/A/big" ] && ok "remote files are never deleted" || not_ok "remote delete" "$out" "$err"
grep -q "\[+\] localhost:$T/B/x/r2 -- on another host" <<< "$out" && ok "... shown as on another host" || not_ok "shown" "$out"
# the remote kept file raced while -d waits for its answer: that set's local
# copy stays, the other sets are acted on, status 1 (-O: the remote files
# first, so '1' keeps the remote one). Racers: a writer appending; a writer
# saving by rename (new inode at the name); a rewrite in place of the same
# size whose mtime is put back (only the ctime tells)
race_kept() { # NAME WHY: runs "$@" on B/s2 (kept for A/s) while the prompt waits; WHY: what is said changed
  local name=$1 why=$2; shift 2
  mk
  mkfifo "$T/answer"
  ( "$DUPSCAN" -rd "${R[@]}" "${RACE_ARGS[@]}" < "$T/answer" > "$T/d.out" 2>&1; echo "rc=$?" >> "$T/d.out" ) &
  exec 7> "$T/answer"
  wait_for "$T/d.out" "Set 1 of $RACE_SETS: keep which files?" || not_ok "remote kept raced: $name: no prompt"; "$@"
  printf '1\n1\n1\n1\n' >&7; exec 7>&-; wait
  [ -e "$T/A/s" ] && [ ! -e "$T/A/big" ] && [ ! -e "$T/A/sub/big2" ] && [ ! -e "$T/A/h1" ] && [ -e "$T/B/x/big3" ] &&
    grep -q "\[!\] $T/A/s -- File changed during the scan" "$T/d.out" && grep -q "rc=1" "$T/d.out" &&
    grep -qF "dupscan: localhost:$T/B/s2: Changed since the scan: $why" "$T/d.out" &&
    ok "the remote kept file raced ($name): its set's local copy stays, the others go, status 1; said: the remote file, $why" ||
    not_ok "remote kept raced: $name" "$(cat "$T/d.out")" "$(find "$T/A" "$T/B")"
  rm -f "$T/answer"
}
RACE_ARGS=(-O "localhost:$T/B" "$T/A") RACE_SETS=4
append() { echo "same, and more" >> "$T/B/s2"; }
save_by_rename() { echo "saved again" > "$T/B/.s2.new"; mv "$T/B/.s2.new" "$T/B/s2"; }
mtime_put_back() { touch -r "$T/B/s2" "$T/ref"; printf 'SAME\n' > "$T/B/s2"; touch -r "$T/ref" "$T/B/s2"; }
race_kept "a writer appending" "its size" append
race_kept "saved by rename" "its name leads to another file, or to none" save_by_rename
race_kept "rewritten, its mtime put back" "its inode (ctime; its mtime as it was)" mtime_put_back
touched() { touch -d '2001-01-01' "$T/B/s2"; }
race_kept "touched" "its modification time" touched
renamed_away() { mv "$T/B/s2" "$T/B/s2.old"; }
race_kept "renamed away" "its name leads to another file, or to none" renamed_away
# the same with B as a reference on its host (--reference=HOST:PATH: its
# files first, one of them kept; B/r1 and B/x/r2, B's own copies, are no set)
RACE_ARGS=(--reference="localhost:$T/B" "$T/A") RACE_SETS=3
race_kept "saved by rename, B a reference" "its name leads to another file, or to none" save_by_rename
race_kept "rewritten, its mtime put back, B a reference" "its inode (ctime; its mtime as it was)" mtime_put_back

# ---- at scale: every set's kept copy on the other host ----
# (the server held at most 64 kept files open for its checks and refused the
# 65th: such a run acted on 64 sets and refused the rest as "changed")
mk_many() { # N: N sets, one copy in A, one in B, in several directories
  rm -rf "$T/A" "$T/B" "${J:-$T}/M"
  python3 - "$T" "$1" <<'PY'
import os, sys
t, n = sys.argv[1], int(sys.argv[2])
for s in range(n):
    data = f"set {s} ".encode() * (1 + s % 30)
    for side, d in (("A", s % 40), ("B", s % 37)):
        os.makedirs(f"{t}/{side}/d{d}", exist_ok=True)
        with open(f"{t}/{side}/d{d}/f{s}", "wb") as f:
            f.write(data)
PY
}
count() { find "$1" -type f 2>/dev/null | wc -l; }
n=${REMOTE_SETS:-4000}
# the journals and the moves' destination in memory where they can be (another
# filesystem, so moves copy): one fsync per change, and one per directory
# moved into, are the most of such a run's time on a disk (5.9 s of 6.3 here),
# and not what is tested
J=$( [ -d /dev/shm ] && [ -w /dev/shm ] && mktemp -d /dev/shm/dupscan-remote-XXXXXX || echo "$T")
trap 'rm -rf "$J"; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
mk_many "$n"
run "$DUPSCAN" -rqdN "${R[@]}" --journal="$J/j1" --protect="localhost:$T/B" "$T/A" "localhost:$T/B"
[ "$rc" = 0 ] && [ "$(count "$T/A")" = 0 ] && [ "$(count "$T/B")" = "$n" ] && ! grep -q '\[!\]' <<< "$out" &&
  ok "-dN keeping the remote copies of $n sets: every local copy deleted, none refused" ||
  not_ok "-dN at scale" "rc $rc, $(count "$T/A") left" "$(grep -m3 '\[!\]' <<< "$out")" "$err"
# the kept copy on the other host is named HOST:PATH in the journal, not as
# a path under the working directory; --undo names it where it says the
# deletion cannot be undone
kept=$(awk -F'\t' '$1 == "delete" { print $2; exit }' "$J/j1")
case $kept in
  "localhost:$T/B/"*) ok "the journal names the remote kept file HOST:PATH ($kept)" ;;
  *) not_ok "the journal names the remote kept file HOST:PATH" "kept: $kept" ;;
esac
run "$DUPSCAN" --undo="$J/j1"
[ "$rc" = 1 ] && expect_err "--undo of a deletion names the copy kept on the other host" \
  "was deleted \(without --move-to\): cannot be undone; its copy was kept at localhost:$T/B/" ||
  not_ok "--undo of a remote-kept deletion: status 1" "rc $rc" "$err"
mk_many "$n"
run "$DUPSCAN" -rq "${R[@]}" --journal="$J/j2" --protect="localhost:$T/B" --move-to="$J/M" "$T/A" "localhost:$T/B"
[ "$rc" = 0 ] && [ "$(count "$T/A")" = 0 ] && [ "$(count "$J/M")" = "$n" ] && [ "$(count "$T/B")" = "$n" ] &&
  ok "--move-to keeping the remote copies of $n sets: every local copy moved, none refused" ||
  not_ok "--move-to at scale" "rc $rc, $(count "$T/A") left" "$(grep -m3 '\[!\]' <<< "$out")" "$err"
# one remote kept file far past the 64th changed while the prompt waits: that set alone stays
mk_many 300
mkfifo "$T/answer"
( "$DUPSCAN" -rdO "${R[@]}" --journal="$J/j3" "localhost:$T/B" "$T/A" < "$T/answer" > "$T/d.out" 2>&1; echo "rc=$?" >> "$T/d.out" ) &
exec 7> "$T/answer"
wait_for "$T/d.out" "Set 1 of 300: keep which files?"; echo "and more" >> "$T/B/d$((250 % 37))/f250"
for i in $(seq 300); do echo 1; done >&7; exec 7>&-; wait
[ "$(find "$T/A" -type f)" = "$T/A/d$((250 % 40))/f250" ] && grep -q "rc=1" "$T/d.out" &&
  grep -q "\[!\] $T/A/d$((250 % 40))/f250 -- File changed during the scan" "$T/d.out" &&
  grep -qF "dupscan: localhost:$T/B/d$((250 % 37))/f250: Changed since the scan: its size" "$T/d.out" &&
  ok "300 sets, the 250th's remote kept file changed: that set alone refused, status 1" ||
  not_ok "one changed at scale" "$(grep -m5 '\[!\]\|rc=' "$T/d.out")" "$(find "$T/A" -type f | head -3)"
rm -f "$T/answer"

# two runs at once, both keeping the remote copies: each local copy goes once,
# nothing on the other side is touched, no content is lost
mk
"$DUPSCAN" -rqdNO "${R[@]}" "localhost:$T/B" "$T/A" > "$T/r1.out" 2>&1 & p1=$!
"$DUPSCAN" -rqdNO "${R[@]}" "localhost:$T/B" "$T/A" > "$T/r2.out" 2>&1 & p2=$!
wait $p1; wait $p2
[ ! -e "$T/A/big" ] && [ ! -e "$T/A/sub/big2" ] && [ ! -e "$T/A/s" ] && [ ! -e "$T/A/h1" ] && [ -e "$T/A/d1" ] &&
  [ -e "$T/B/x/big3" ] && [ -e "$T/B/s2" ] && [ -e "$T/B/h2" ] && [ -e "$T/B/r1" ] && [ -e "$T/B/x/r2" ] &&
  ok "two runs at once keeping the remote copies: local copies gone once, the other side untouched" ||
  not_ok "two runs" "$(cat "$T/r1.out" "$T/r2.out")" "$(find "$T/A" "$T/B")"

for act in -L -B -l; do
  run "$DUPSCAN" -rq "${R[@]}" $act "$T/A" "localhost:$T/B"
  [ "$rc" = 2 ] && grep -q "links and dedupe need both files on this host" <<< "$err" && ok "$act across hosts refused" || not_ok "$act refused" "$rc" "$err"
done
run "$DUPSCAN" -rq "${R[@]}" -p "$T/A" "localhost:$T/B"
[ "$rc" = 2 ] && ok "-p with HOST:PATH refused" || not_ok "-p" "$err"

# peers that are not servers, or fail
printf 'Welcome to the box\n' > "$T/motd"
cat > "$T/rsh-chatty" <<SH
#!/bin/sh
cat "$T/motd"; shift; exec sh -c "\$*"
SH
cat > "$T/rsh-dead" <<'SH'
#!/bin/sh
exit 255
SH
# a server of another protocol: its greeting says protocol 99
cat > "$T/rsh-other" <<'SH'
#!/bin/sh
python3 -c '
import sys
def s(b): return bytes([len(b)]) + b
body = bytes([1]) + s(b"dupscan-wire") + bytes([99]) + s(b"9.9.9")
sys.stdout.buffer.write(len(body).to_bytes(4, "little") + body); sys.stdout.flush()
sys.stdin.buffer.read()'
SH
cat > "$T/rsh-silent" <<'SH'
#!/bin/sh
exec sleep 30
SH
# one that dies in the middle of its results
cat > "$T/rsh-cut" <<SH
#!/bin/sh
shift; sh -c "\$*" | head -c 200
SH
chmod +x "$T"/rsh-*
mk
for c in "chatty:not a dupscan server, or a remote shell that prints" "dead:connection closed\|connection lost" \
         "other:protocol version mismatch: the other side is dupscan 9.9.9 (protocol 99)" "silent:no answer for 1 s" \
         "cut:truncated frame\|connection closed\|no answer for 1 s"; do
  name=${c%%:*}; msg=${c#*:}
  run timeout 20 "$DUPSCAN" -rq --rsh="$T/rsh-$name" --remote-dupscan="$DUPSCAN" --remote-timeout=1 -dN "$T/A" "localhost:$T/B"
  [ "$rc" = 1 ] && grep -q "localhost:$T/B: .*\($msg\)" <<< "$err" && [ -e "$T/A/big" ] && [ -e "$T/A/sub/big2" ] &&
    ok "a $name peer fails the run, naming the host, nothing changed" || not_ok "$name peer" "rc $rc" "$err" "$out"
done

# a server at long work (a whole hash slower than --remote-timeout, its reads
# slowed by the fault shim where it is built) says it is alive meanwhile
if [ -n "${FAULT_LIB:-}" ]; then
  mk
  truncate -s 250M "$T/A/huge"; printf a >> "$T/A/huge"; truncate -s 250M "$T/B/huge2"; printf b >> "$T/B/huge2"
  t0=$(date +%s%N)
  run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:B/huge2:DELAY" "$DUPSCAN" -rqm "${R[@]}" --remote-timeout=1 "$T/A" "localhost:$T/B"
  ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  [ "$rc" = 0 ] && [ "$ms" -gt 1000 ] && grep -q "^5 duplicate files" <<< "$out" &&
    ok "a server hashing for longer than the timeout ($ms ms) is not taken for a silent one" ||
    not_ok "slow server" "rc $rc, $ms ms" "$out" "$err"
  rm -f "$T/A/huge" "$T/B/huge2"
  # a local file failing half way through its comparison, the other host's
  # rounds asked ahead (9 MB: 12 rounds, 4 MB ahead): reported, those rounds'
  # answers read and dropped, the channel in step for what is asked next
  mk
  head -c 9000000 /dev/urandom > "$T/A/nine"; cp "$T/A/nine" "$T/B/nine2"
  : > "$T/reads"
  env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:A/nine:LOG" DUPSCAN_FAULT_LOG="$T/reads" \
    "$DUPSCAN" -rq "${R[@]}" "$T/A" "localhost:$T/B" > /dev/null 2>&1
  n=$(wc -l < "$T/reads")  # the hash's reads, then the comparison's
  run "$DUPSCAN" -rq "${R[@]}" "$T/A" "localhost:$T/B"
  want=$(grep -v nine <<< "$out" | cat -s)
  run env LD_PRELOAD="$FAULT_LIB" DUPSCAN_FAULT="pread64:A/nine:EIO@$((n - 6))" "$DUPSCAN" -rq "${R[@]}" "$T/A" "localhost:$T/B"
  [ "$rc" = 1 ] && [ "$(cat -s <<< "$out")" = "$want" ] && grep -q "A/nine: $E_IO" <<< "$err" &&
    ok "a local file failing mid-comparison ($n reads, the $((n - 6))th fails): reported, the other sets as without it" ||
    not_ok "failing mid-comparison" "rc $rc" "$out" "--- want" "$want" "$err"
  rm -f "$T/A/nine" "$T/B/nine2"
else
  ok "# SKIP no fault shim in this build: a slow server is not made"
fi

# garbage from a client: the server says why and stops (status 1), never crashes
for g in 'plain text' "$(printf '\xff\xff\xff\x7f')" "$(printf '\x05\x00\x00\x00\x01\x02')"; do
  run timeout 20 "$DUPSCAN" --server <<< "$g"
  [ "$rc" = 1 ] && ok "--server given garbage: status 1 ($err)" || not_ok "--server garbage" "rc $rc" "$err"
done
done_testing
