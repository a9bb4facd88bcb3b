#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Copies that already share their blocks: reflinks and snapshots on btrfs,
# reflinks on XFS. -m and the JSON split what is shared from what an action
# could win (oracle: the sizes of the copies that were rewritten); files that
# share all but one block, and a compressed mount, are never taken as one;
# a second -B asks nothing of the filesystem (counted with strace). Each
# filesystem is skipped, with its reason, where it cannot be made here.
. "$(dirname "$0")/../fixtures/lib.sh"

skip_all() { ok "# SKIP shared blocks: $1"; done_testing; }
[ "$(id -u)" = 0 ] || skip_all "mounting a loop image needs root"
command -v mkfs.btrfs >/dev/null || skip_all "mkfs.btrfs (btrfs-progs) not installed"
mkdir bt xf
trap 'umount "$T/bt" "$T/xf" "$T/bz" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
truncate -s 512M bt.img && mkfs.btrfs -q bt.img >/dev/null 2>&1 || skip_all "mkfs.btrfs failed"
mount -o loop bt.img bt 2>/dev/null || skip_all "loop mount not permitted here"

shared_of() { # FILE: -m's line "of which X already shared, Y to reclaim" (empty when nothing is shared)
  "$DUPSCAN" -rqm "$1" | sed -n 's/^of which \(.*\) already shared (reflinks, snapshots), \(.*\) to reclaim$/\1|\2/p'
}
json_sum() { # TREE KEY: the sum of KEY over the JSON's sets
  "$DUPSCAN" -rqj "$1" | python3 -c 'import json,sys; print(sum(s[sys.argv[1]] for s in json.load(sys.stdin)["matchSets"]))' "$2"
}
waste() { # TREE: sum over the sets of size * (files - 1), from the JSON
  "$DUPSCAN" -rqj "$1" | python3 -c 'import json,sys; print(sum(s["fileSize"] * (len(s["fileList"]) - 1) for s in json.load(sys.stdin)["matchSets"]))'
}

# 40 files, each reflinked once, then two read-only snapshots of all of it
btrfs subvolume create bt/vol >/dev/null
for i in $(seq 1 40); do head -c $((i * 7919 + 100)) /dev/urandom > "bt/vol/f$i"; done
sync
for i in $(seq 1 40); do cp --reflink=always "bt/vol/f$i" "bt/vol/c$i"; done
sync
btrfs subvolume snapshot -r bt/vol bt/s1 >/dev/null && btrfs subvolume snapshot -r bt/vol bt/s2 >/dev/null
sync
sets=$("$DUPSCAN" -rq bt | grep -c '^$')
[ "$sets" = 40 ] && ok "btrfs: the 40 sets listed, snapshot copies included" || not_ok "btrfs sets" "$sets"
w=$(waste bt)
[ "$(json_sum bt sharedBytes)" = "$w" ] && ok "btrfs: the JSON's sharedBytes are all the waste ($w bytes)" ||
  not_ok "btrfs sharedBytes" "$(json_sum bt sharedBytes) of $w"
grep -q '|0 bytes$' <<< "$(shared_of bt)" && ok "btrfs: -m says 0 bytes to reclaim" || not_ok "btrfs -m" "$("$DUPSCAN" -rqm bt)"

# a tenth of the copies rewritten: their bytes are to reclaim, to the byte
want=0
for i in 3 7 11 15; do cp --reflink=never "bt/vol/c$i" tmp && mv tmp "bt/vol/c$i"; want=$((want + i * 7919 + 100)); done
sync
got=$(( $(waste bt) - $(json_sum bt sharedBytes) ))
[ "$got" = "$want" ] && ok "btrfs: four copies rewritten, their $want bytes to reclaim" || not_ok "btrfs rewritten" "got $got, want $want"
"$DUPSCAN" -rqM bt | tail -1 | grep -q 'to reclaim$' && ok "-M: the split after the sets too" || not_ok "-M" "$("$DUPSCAN" -rqM bt | tail -2)"

# the sets against a sha256 oracle, in every reading mode: snapshots,
# reflinks, a copy made by copy_file_range (a reflink on btrfs) and one made
# byte by byte, each in its whole set
cp --reflink=never bt/vol/f5 bt/vol/g5; python3 -c 'import shutil; shutil.copyfile("bt/vol/f6", "bt/vol/g6")'
head -c 12345 /dev/urandom > bt/vol/lone; cp --reflink=always bt/vol/lone bt/vol/lone2; sync
oracle() { find "$@" -type f -size +0 -print0 | xargs -0 sha256sum | python3 -c '
import sys, collections
g = collections.defaultdict(list)
for line in sys.stdin:
    h, p = line.rstrip("\n").split("  ", 1); g[h].append(p)
print(sorted(sorted(v) for v in g.values() if len(v) > 1))'; }
listed() { "$DUPSCAN" -rq "$@" | python3 -c '
import sys
sets = [s.split("\n") for s in sys.stdin.read().strip("\n").split("\n\n") if s]
print(sorted(sorted(s) for s in sets))'; }
want=$(oracle bt)
for io in auto hdd ssd net; do
  [ "$(listed --io=$io bt)" = "$want" ] && ok "btrfs --io=$io: the sets a sha256 listing makes" || not_ok "btrfs --io=$io sets" "$(diff <(listed --io=$io bt | tr ']' '\n') <(echo "$want" | tr ']' '\n') | head -5)"
done
[ "$(listed --threads=1 bt)" = "$want" ] && ok "btrfs, one thread: the same sets" || not_ok "btrfs --threads=1"
# with the hash cache: no hash of an unread twin is kept, the next runs alike
for run in first second; do
  [ "$(listed --cache="$T/c.bin" bt)" = "$want" ] && ok "btrfs with --cache, $run run: the same sets" || not_ok "btrfs --cache $run"
done
[ "$(listed --cache="$T/c.bin" --cache-trust bt)" = "$want" ] && ok "btrfs with --cache-trust: the same sets" || not_ok "btrfs --cache-trust"
# unread: a snapshot tree mounted afresh (nothing cached) costs its first
# blocks and its metadata, not its data; on a spinning disk (--io=hdd) too,
# where the first pass maps the files whose first extent is shared and the
# sweep reads each content once. Six files of one size (one group of 18),
# six of sizes of their own (groups of three the sweep would read whole).
btrfs subvolume create bt/cold >/dev/null
for i in $(seq 1 6); do head -c 2000000 /dev/urandom > "bt/cold/f$i"; done
for i in $(seq 7 12); do head -c $((2000000 + i * 4096)) /dev/urandom > "bt/cold/f$i"; done; sync
btrfs subvolume snapshot -r bt/cold bt/cold-s1 >/dev/null; btrfs subvolume snapshot -r bt/cold bt/cold-s2 >/dev/null; sync
for io in ssd hdd; do
  umount bt && mount -o loop bt.img bt
  loopdev=$(basename "$(findmnt -no SOURCE bt)")
  before=$(awk '{print $3}' "/sys/block/$loopdev/stat")
  n=$("$DUPSCAN" -rq --io=$io bt/cold bt/cold-s1 bt/cold-s2 | grep -c '^$')
  read_kb=$(( ($(awk '{print $3}' "/sys/block/$loopdev/stat") - before) / 2 ))
  [ "$n" = 12 ] && [ "$read_kb" -lt 3600 ] && ok "--io=$io: 12 files in 3 snapshots (72 MB): ${read_kb} KiB read, under 5%" ||
    not_ok "--io=$io: snapshot tree read" "$n sets, $read_kb KiB"
done
[ "$(listed --io=hdd bt/cold bt/cold-s1 bt/cold-s2)" = "$(oracle bt/cold bt/cold-s1 bt/cold-s2)" ] &&
  ok "--io=hdd: the snapshots' sets a sha256 listing makes" || not_ok "--io=hdd snapshot sets"
# a snapshot tree as a NAS holds one: files of sizes all their own, so each
# size group is one file and its snapshots' copies, nothing to tell apart:
# on a spinning disk its first block names it, its head is not read
btrfs subvolume create bt/many >/dev/null
for i in $(seq 1 60); do head -c $((20000 + i * 1301)) /dev/urandom > "bt/many/m$i"; done; sync
for s in 1 2 3; do btrfs subvolume snapshot -r bt/many "bt/many-s$s" >/dev/null; done; sync
umount bt && mount -o loop bt.img bt
loopdev=$(basename "$(findmnt -no SOURCE bt)")
total_kb=$(( $(du -skb --apparent-size bt/many | cut -f1) * 4 / 1024 ))
before=$(awk '{print $3}' "/sys/block/$loopdev/stat")
n=$("$DUPSCAN" -rq --io=hdd bt/many bt/many-s1 bt/many-s2 bt/many-s3 | grep -c '^$')
read_kb=$(( ($(awk '{print $3}' "/sys/block/$loopdev/stat") - before) / 2 ))
[ "$n" = 60 ] && [ "$read_kb" -lt $((total_kb / 20)) ] &&
  ok "--io=hdd: 60 files of their own sizes in 4 trees (${total_kb} KiB): ${read_kb} KiB read, under 5%" ||
  not_ok "--io=hdd: snapshots of lone sizes" "$n sets, $read_kb of $total_kb KiB"
[ "$(listed --io=hdd bt/many bt/many-s1 bt/many-s2 bt/many-s3)" = "$(oracle bt/many bt/many-s1 bt/many-s2 bt/many-s3)" ] &&
  ok "--io=hdd: their sets a sha256 listing makes" || not_ok "--io=hdd lone sizes' sets"
# again with every file in the page cache: the copies are not read from it either
find bt/many bt/many-s1 bt/many-s2 bt/many-s3 -type f -exec cat {} + > /dev/null
warm_kb=$(python3 - "$DUPSCAN" bt/many bt/many-s1 bt/many-s2 bt/many-s3 <<'PY'
import subprocess, sys
def rchar():
    return int([l for l in open("/proc/self/io") if l.startswith("rchar")][0].split()[1])
before = rchar()
subprocess.run([sys.argv[1], "-rq", "--io=hdd"] + sys.argv[2:], stdout=subprocess.DEVNULL, check=True)
print((rchar() - before) // 1024)
PY
)
[ -n "$warm_kb" ] && [ "$warm_kb" -lt $((total_kb / 20)) ] &&
  ok "--io=hdd, warm: ${warm_kb} KiB read of ${total_kb} KiB, under 5%" || not_ok "--io=hdd warm read" "$warm_kb of $total_kb KiB"
# one of them rewritten in the live tree, a byte changed: no longer its snapshots' twin, read and told apart
cp bt/many/m7 bt/many/m7.new && printf y | dd of=bt/many/m7.new bs=1 seek=4096 conv=notrunc 2>/dev/null && mv bt/many/m7.new bt/many/m7; sync
[ "$(listed --io=hdd bt/many bt/many-s1 bt/many-s2 bt/many-s3)" = "$(oracle bt/many bt/many-s1 bt/many-s2 bt/many-s3)" ] &&
  ok "--io=hdd: one rewritten with a byte changed past its first block: the sets a sha256 listing makes" ||
  not_ok "--io=hdd lone size changed"
# a snapshot's copy rewritten after the snapshot: read, found unlike
cp bt/cold/f3 bt/cold/f3.new && printf x | dd of=bt/cold/f3.new bs=1 seek=1500000 conv=notrunc 2>/dev/null && mv bt/cold/f3.new bt/cold/f3
cp bt/cold/f9 bt/cold/f9.new && mv bt/cold/f9.new bt/cold/f9; sync
[ "$(listed --io=hdd bt/cold bt/cold-s1 bt/cold-s2)" = "$(oracle bt/cold bt/cold-s1 bt/cold-s2)" ] &&
  ok "--io=hdd: a copy changed, another rewritten alike: the sets a sha256 listing makes" || not_ok "--io=hdd changed copies"

# auto mode on a subvolume (a snapshot): its files' device number is none
# that mountinfo names, yet it lies on the disk under the filesystem's mount
# (a loop device marked rotational, its image where storage cannot be told)
progress_io() { script -qec "'$DUPSCAN' -r $*" /dev/null | tr '\r' '\n' | grep -o '(hdd\|(ssd' | tail -1; }
# (and on kernels where even the top subvolume's files have a number of
# their own, every btrfs file: auto mode read btrfs disks as SSDs before)
mkdir -p bt/top && head -c 300000 /dev/urandom > bt/top/a && cp --reflink=never bt/top/a bt/top/b && sync
if command -v script >/dev/null && [ "$(stat -f -c %T .)" != tmpfs ] &&
   echo 1 > "/sys/block/$loopdev/queue/rotational" 2>/dev/null; then
  [ "$(progress_io bt/cold-s1 bt/cold-s2)" = "(hdd" ] && [ "$(progress_io bt/top)" = "(hdd" ] &&
    ok "auto: a snapshot's files, and the top's, read as on the filesystem's spinning disk" ||
    not_ok "auto on a snapshot" "$(progress_io bt/cold-s1 bt/cold-s2)" "$(progress_io bt/top)"
else
  ok "# SKIP no loop device marked rotational on a disk here (or no script(1))"
fi

# --summary=dirs: of each directory's bytes with a copy, those in shared
# blocks (the reflinked pairs, both files of each), as a column of its own
mkdir bt/sd
for i in 1 2 3 4 5; do head -c $((i * 30011)) /dev/urandom > "bt/sd/r$i"; done
head -c 77777 /dev/urandom > bt/sd/p; sync
for i in 1 2 3 4 5; do cp --reflink=always "bt/sd/r$i" "bt/sd/s$i"; done; cp --reflink=never bt/sd/p bt/sd/q; sync
shared_want=$(( 2 * (30011 + 60022 + 90033 + 120044 + 150055) ))
got=$("$DUPSCAN" -rq --summary=dirs --format=json bt/sd | python3 -c '
import json, sys
d = json.load(sys.stdin)["directories"][0]
print(d["dupBytes"], d["sharedBytes"])')
[ "$got" = "$((shared_want + 2 * 77777)) $shared_want" ] && ok "--summary=dirs: the shared bytes of a directory ($shared_want of $((shared_want + 2 * 77777)))" ||
  not_ok "--summary=dirs shared" "$got"
"$DUPSCAN" -rq --summary=dirs bt/sd | grep -q "shared  bt/sd/$" && ok "--summary=dirs: the text has the column" || not_ok "--summary=dirs text" "$("$DUPSCAN" -rq --summary=dirs bt/sd)"
[ "$("$DUPSCAN" -rq --summary=dirs --format=csv bt/sd | head -1)" = "path,depth,files,bytes,dup_files,dup_bytes,percent,shared_bytes" ] &&
  ok "--summary=dirs: the CSV has the column" || not_ok "--summary=dirs csv"

# --overlap: of a folder's bytes with a copy in another, those in blocks a
# copy holds too (three reflinked files, one real copy)
mkdir -p bt/ov/a bt/ov/b
for i in 1 2 3; do head -c $((i * 50021)) /dev/urandom > "bt/ov/a/f$i"; cp --reflink=always "bt/ov/a/f$i" "bt/ov/b/f$i"; done
head -c 40009 /dev/urandom > bt/ov/a/g; cp --reflink=never bt/ov/a/g bt/ov/b/g; sync
got=$("$DUPSCAN" -rq --overlap=50 --format=json bt/ov | python3 -c '
import json, sys
p = json.load(sys.stdin)["overlaps"][0]
print(p["a"]["bytes"], p["a"]["sharedBytes"], p["b"]["bytes"], p["b"]["sharedBytes"])')
ov_sh=$(( 50021 + 100042 + 150063 ))
[ "$got" = "$((ov_sh + 40009)) $ov_sh $((ov_sh + 40009)) $ov_sh" ] && ok "--overlap: each side's shared bytes ($ov_sh of $((ov_sh + 40009)))" ||
  not_ok "--overlap shared" "$got"
"$DUPSCAN" -rq --overlap=50 bt/ov | grep -q "340.1 KB, 300.1 KB of it shared) also in bt/ov/b/" && ok "--overlap: the text says how much is shared" ||
  not_ok "--overlap text" "$("$DUPSCAN" -rq --overlap=50 bt/ov)"
[ "$("$DUPSCAN" -rq --overlap=50 --format=csv bt/ov | head -1 | grep -o 'shared_bytes_a,shared_bytes_b$')" ] &&
  ok "--overlap: the CSV has the columns" || not_ok "--overlap csv"
"$DUPSCAN" -rq --overlap=50 --format=html bt/ov > ov.html
python3 - "$ov_sh" <<'PY' && ok "--overlap: the page's pairs carry each side's shared bytes" || not_ok "--overlap page data" "$(grep -o '"pairs": [^]]*]' ov.html)"
import json, re, sys
d = json.loads(re.search(r'<script id="data" type="application/json">\n(.*?)</script>', open("ov.html").read(), re.S).group(1))
assert [p[6:] for p in d["pairs"]] == [[int(sys.argv[1])] * 2], d["pairs"]
PY

# the page: what would be freed is the real copy's bytes, the shared ones
# said apart (its set data carries them), in a real browser where there is one
"$DUPSCAN" -rq --format=html bt/sd > page.html
python3 - "$shared_want" <<'PY' && ok "the page's data: each set's shared bytes" || not_ok "the page's data"
import json, re, sys
d = json.loads(re.search(r'<script id="data" type="application/json">\n(.*?)</script>', open("page.html").read(), re.S).group(1))
assert sum(s[2] for s in d["sets"]) == int(sys.argv[1]) // 2, d["sets"]
PY
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$browser" ] && dom=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
     --virtual-time-budget=5000 --dump-dom "file://$T/page.html" 2>/dev/null) && [ -n "$dom" ]; then
  grep -q '77.8 KB would be freed keeping one file of each set (450.2 KB more of their copies share their blocks already' <<< "$dom" &&
    ok "the page: 77.8 KB would be freed, the shared 450.2 KB said apart" || not_ok "the page's summary" "$(grep -o 'id="summary">[^<]*' <<< "$dom")"
  ovdom=$(timeout 120 "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/profile" \
    --virtual-time-budget=5000 --dump-dom "file://$T/ov.html" 2>/dev/null)
  grep -q '340.1 KB, 300.1 KB of it shared)' <<< "$ovdom" && ok "the page: a pair's row says how much of it is shared" ||
    not_ok "the page's pair row" "$(grep -o '<td class="num">[^<]*' <<< "$ovdom" | head -4)"
else
  ok "# SKIP no chromium that runs here"
fi

# all but one block shared, then a byte changed in it: never one content
mkdir bt/part
head -c 1048576 /dev/urandom > bt/part/a; sync
if command -v xfs_io >/dev/null && xfs_io -f -c "reflink $T/bt/part/a 0 0 1044480" bt/part/b >/dev/null 2>&1; then
  # the last block as a's, its last byte made another
  python3 -c 'import sys; d = open(sys.argv[1], "rb").read()[-4096:]; sys.stdout.buffer.write(d[:-1] + bytes([d[-1] ^ 0xff]))' bt/part/a >> bt/part/b; sync
  [ "$(stat -c %s bt/part/b)" = 1048576 ] && [ -z "$("$DUPSCAN" -rq bt/part)" ] &&
    ok "all but one block shared, one byte changed: not a duplicate" || not_ok "partial" "$("$DUPSCAN" -rq bt/part)"
else
  ok "# SKIP xfs_io cannot reflink a range here"
fi

# a compressed mount: extents referenced in part are counted whole, and read
umount bt
mkdir bz && mount -o loop,compress=zstd bt.img bz 2>/dev/null || skip_all "compress=zstd mount refused"
mkdir bz/z; yes dupscan | head -c 3000000 > bz/z/a; sync
cp --reflink=always bz/z/a bz/z/b; sync
xfs_io -c "pwrite -S 0x41 100000 10" bz/z/b >/dev/null 2>&1 || printf 'AAAAAAAAAA' | dd of=bz/z/b bs=1 seek=100000 conv=notrunc 2>/dev/null
sync
[ -z "$("$DUPSCAN" -rq bz/z)" ] && ok "compress=zstd: a copy changed in one extent is not a duplicate" || not_ok "compressed" "$("$DUPSCAN" -rq bz/z)"
cp --reflink=never bz/z/a bz/z/c; sync
[ "$("$DUPSCAN" -rq bz/z | grep -c .)" = 2 ] && ok "compress=zstd: a plain copy still found" || not_ok "compressed copy" "$("$DUPSCAN" -rq bz/z)"
umount bz

# -B twice: the second finds every set shared and asks nothing
mount -o loop bt.img bt
mkdir bt/dd; for i in 1 2 3; do head -c 300000 /dev/urandom > "bt/dd/o$i"; cp --reflink=never "bt/dd/o$i" "bt/dd/p$i"; done; sync
"$DUPSCAN" -rqB bt/dd >/dev/null 2>&1; sync
if command -v strace >/dev/null; then
  calls=$(strace -f -e trace=ioctl "$DUPSCAN" -rqB bt/dd 2>&1 >/dev/null | grep -c FIDEDUPERANGE)
  [ "$calls" = 0 ] && ok "-B again: no FIDEDUPERANGE call" || not_ok "-B again called FIDEDUPERANGE" "$calls"
else
  ok "# SKIP strace not installed"
fi
[ "$(waste bt/dd)" = "$(json_sum bt/dd sharedBytes)" ] && ok "after -B: everything shared, nothing to reclaim" || not_ok "after -B" "$(waste bt/dd) $(json_sum bt/dd sharedBytes)"
# -B raced by a writer that saves each duplicate anew (write a temporary
# file, rename it over the name) while the run goes: whatever -B saw, every
# name ends holding what the writer wrote, never the kept file's bytes
mkdir bt/race
for i in $(seq 1 30); do head -c 200000 /dev/urandom > "bt/race/o$i"; cp --reflink=never "bt/race/o$i" "bt/race/p$i"; done; sync
( for i in $(seq 1 30); do head -c 200000 /dev/urandom > "bt/race/.w$i"; cp "bt/race/.w$i" "bt/race/.n$i"; mv "bt/race/.n$i" "bt/race/p$i"; sleep 0.002; done ) &
writer=$!
"$DUPSCAN" -rqB bt/race >/dev/null 2>&1
wait $writer
bad=$(for i in $(seq 1 30); do cmp -s "bt/race/.w$i" "bt/race/p$i" || echo "p$i"; done)
[ -z "$bad" ] && ok "-B raced by a rename-saving writer: every duplicate holds what the writer wrote" || not_ok "-B race" "$bad"
umount bt

# XFS with reflink copies
if command -v mkfs.xfs >/dev/null && truncate -s 512M xf.img && mkfs.xfs -q -m reflink=1 xf.img >/dev/null 2>&1 &&
   mount -o loop xf.img xf 2>/dev/null; then
  for i in $(seq 1 10); do head -c $((i * 10007)) /dev/urandom > "xf/f$i"; done; sync
  for i in $(seq 1 10); do cp --reflink=always "xf/f$i" "xf/c$i"; cp --reflink=always "xf/f$i" "xf/d$i"; done; sync
  [ "$("$DUPSCAN" -rq xf | grep -c '^$')" = 10 ] && ok "XFS: the 10 sets listed" || not_ok "XFS sets"
  [ "$(json_sum xf sharedBytes)" = "$(waste xf)" ] && grep -q '|0 bytes$' <<< "$(shared_of xf)" &&
    ok "XFS: reflinks all shared, 0 bytes to reclaim" || not_ok "XFS shared" "$("$DUPSCAN" -rqm xf)"
  cp --reflink=never xf/d4 tmp && mv tmp xf/d4; sync
  [ $(( $(waste xf) - $(json_sum xf sharedBytes) )) = 40028 ] && ok "XFS: one copy rewritten, its 40028 bytes to reclaim" ||
    not_ok "XFS rewritten" "$(( $(waste xf) - $(json_sum xf sharedBytes) ))"
  umount xf
else
  ok "# SKIP XFS with reflink cannot be made here"
fi
# ext4 (this test's own directory or tmpfs): nothing shared, -m as jdupes writes it
mkdir plain; head -c 5000 /dev/urandom > plain/a; cp plain/a plain/b
[ "$("$DUPSCAN" -rqm plain)" = "1 duplicate files (in 1 sets), occupying 5 KB" ] && ok "no sharing filesystem: -m's one line" || not_ok "-m plain" "$("$DUPSCAN" -rqm plain)"
"$DUPSCAN" -rq --summary=dirs --format=csv plain | head -1 | grep -qx 'path,depth,files,bytes,dup_files,dup_bytes,percent' &&
  ! "$DUPSCAN" -rq --summary=dirs plain | grep -q shared && ok "no sharing filesystem: --summary=dirs without the column" || not_ok "--summary=dirs plain"
mkdir -p plain2/x plain2/y; cp plain/a plain2/x/a; cp plain/a plain2/y/a
"$DUPSCAN" -rq --overlap=50 --format=csv plain2 | head -1 | grep -q 'bytes_total_b$' && ! "$DUPSCAN" -rq --overlap=50 plain2 | grep -q shared &&
  ok "no sharing filesystem: --overlap without the shared figure" || not_ok "--overlap plain"
if command -v strace >/dev/null; then
  opens() { strace -f -e trace=open,openat "$DUPSCAN" "$@" 2>&1 >/dev/null | grep -c 'plain/[ab]"'; }
  [ "$(opens -rqm plain)" = "$(opens -rq plain)" ] && ok "no sharing filesystem: -m opens no file to ask where it lies" ||
    not_ok "-m opened files" "$(opens -rqm plain) against $(opens -rq plain)"
fi
done_testing
