#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -B on a filesystem that can share extents: a btrfs loop image when this machine
# lets the test make and mount one; otherwise skipped with the reason printed.
. "$(dirname "$0")/../fixtures/lib.sh"

skip_all() { ok "# SKIP -B on btrfs: $1"; done_testing; }
[ "$(id -u)" = 0 ] || skip_all "mounting a loop image needs root"
command -v mkfs.btrfs >/dev/null || skip_all "mkfs.btrfs (btrfs-progs) not installed"
truncate -s 256M img || skip_all "cannot create an image file"
mkfs.btrfs -q img >/dev/null 2>&1 || skip_all "mkfs.btrfs failed"
mkdir mnt
mount -o loop img mnt 2>/dev/null || skip_all "loop mount not permitted here"
trap 'umount "$T/mnt" 2>/dev/null; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT

cd mnt || exit 1
head -c 5000000 /dev/urandom > a; cp --reflink=never a b; cp --reflink=never a c
head -c 20000000 /dev/urandom > big1; cp --reflink=never big1 big2   # more than one 16 MiB range
head -c 3000000 /dev/urandom > lone
sync
used() { sync; btrfs filesystem sync . >/dev/null 2>&1; df -k --output=used . | tail -1; }
shared() { filefrag -v "$1" 2>/dev/null | grep -c shared; }
before=$(used)
sums=$(sha256sum a b c big1 big2 lone)
run "$DUPSCAN" -B --dry-run .
[ "$(shared b)" = 0 ] && ok "--dry-run shares nothing" || not_ok "--dry-run shared extents"
run "$DUPSCAN" -B .
[ "$rc" = 0 ] && ok "-B status 0" || not_ok "-B status" "$rc $err"
want=$(printf '  [SRC] ./a\n  -##-> ./b\n  -##-> ./c\n  [SRC] ./big1\n  -##-> ./big2\nDeduplication done (3 files processed)')
[ "$out" = "$want" ] && ok "-B output" || not_ok "-B output" "$out"
[ "$(sha256sum a b c big1 big2 lone)" = "$sums" ] && ok "-B: every file's content unchanged" || not_ok "-B changed content"
[ "$(shared b)" -gt 0 ] && [ "$(shared big2)" -gt 0 ] && ok "-B: extents now shared" || not_ok "-B: not shared" "$(filefrag -v b big2)"
after=$(used)
[ $((before - after)) -gt 20000 ] && ok "-B freed space ($before KiB -> $after KiB used)" || not_ok "-B freed too little" "$before -> $after"
run "$DUPSCAN" -B .
want=$(printf '  [SRC] ./a\n  -==-> ./b\n  -==-> ./c\n  [SRC] ./big1\n  -==-> ./big2\nDeduplication done (3 files processed)')
[ "$out" = "$want" ] && [ "$rc" = 0 ] && ok "-B again: already shared" || not_ok "-B again" "$out"
# a forged cache (--cache-trust): u claims the hashes and proof of f1; -B
# compares each pair the cache vouched for, so u is refused and left alone
mkdir forged; cd forged || exit 1
head -c 3000000 /dev/urandom > f1; cp --reflink=never f1 f2; head -c 3000000 /dev/urandom > u
sleep 2.2   # older than the proving run by more than the racy margin
"$DUPSCAN" -rq --cache="$T/c.bin" . > /dev/null
python3 "$(dirname "$0")/../fixtures/cachetool.py" forge "$T/c.bin" f1 u
sum_u=$(sha256sum < u)
run "$DUPSCAN" -B --cache="$T/c.bin" --cache-trust .
[ "$rc" = 1 ] && grep -q "u.*The contents differ" <<< "$out$err" && [ "$(sha256sum < u)" = "$sum_u" ] && [ "$(shared u)" = 0 ] &&
  ok "-B with a forged cache: the pair is compared and refused, u untouched" || not_ok "-B forged" "$rc" "$out" "$err"
[ "$(shared f2)" -gt 0 ] && ok "-B with the cache: the true pair is shared" || not_ok "-B forged: f2 not shared" "$(filefrag -v f2)"
# --keep: the file the rules choose is the source the others share
cd "$T/mnt" || exit 1
mkdir keep; head -c 2000000 /dev/urandom > keep/k1; cp --reflink=never keep/k1 keep/k2; touch -d '2001-01-01' keep/k2
run "$DUPSCAN" -rB --keep=oldest keep
[ "$rc" = 0 ] && grep -q "\[SRC\] keep/k2" <<< "$out" && grep -q "keep/k1" <<< "$out" && ok "-B --keep=oldest: the oldest (listed second by name) is the source" || not_ok "-B --keep" "$out" "$err"
cd "$T" || exit 1
done_testing
