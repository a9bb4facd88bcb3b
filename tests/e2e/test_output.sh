#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Output format and every matching option, with exact expected output.
. "$(dirname "$0")/../fixtures/lib.sh"

mk a/x hello; mk a/sub/y hello; mk b/x hello; mk a/u other; mk b/w world12; mk a/w world12
mk c/1 x; mk c/2 x; : > a/e1; : > b/e2

expect "default sets, name order, blank line after each" 0 "$(printf 'a/sub/y\na/x\nb/x\n\na/w\nb/w\n')" "$DUPSCAN" -r a b
expect "-S sizes, jdupes' spelling for one byte" 0 "$(printf '1 byte  each:\nc/1\nc/2\n')" "$DUPSCAN" -S c
expect "--size" 0 "$(printf '5 bytes each:\na/sub/y\na/x\nb/x\n\n7 bytes each:\na/w\nb/w\n')" "$DUPSCAN" -r --size a b
expect "-f omits the first" 0 "$(printf 'a/x\nb/x\n\nb/w\n')" "$DUPSCAN" -rf a b
expect "-m summary" 0 "3 duplicate files (in 2 sets), occupying 17 bytes" "$DUPSCAN" -rm a b
expect "-m without duplicates" 0 "No duplicates found." "$DUPSCAN" -m a/u b/w
# as jdupes 1.21: with no file at all (none, or only zero-length ones without -z) on stderr
mkdir -p none
for args in none a/e1; do
  run "$DUPSCAN" -m "$args"
  [ "$rc" = 0 ] && [ -z "$out" ] && [ "$err" = "No duplicates found." ] && ok "-m with no file at all ($args): the line on stderr, nothing on stdout" ||
    not_ok "-m with no file ($args)" "status $rc" "out: $out" "err: $err"
done
expect "no duplicates prints nothing" 0 "" "$DUPSCAN" a/u b/w
expect "-M sets then summary" 0 "$(printf 'a/sub/y\na/x\nb/x\n\na/w\nb/w\n\n\n3 duplicate files (in 2 sets), occupying 17 bytes')" "$DUPSCAN" -rM a b
expect "-u unique files" 0 "a/u" "$DUPSCAN" -ru a b
expect "-z zero-length files match; sets ordered by first file" 0 "$(printf 'a/e1\nb/e2\n\na/sub/y\na/x\nb/x\n\na/w\nb/w\n')" "$DUPSCAN" -rz a b
# exact bytes: the blank line after each set, and NULs with -0
expect "exact bytes of the default output" 0 "$(printf 'a/sub/y\na/x\nb/x\n\na/w\nb/w\n\n' | od -An -c)" sh -c '"$1" -r a b | od -An -c' sh "$DUPSCAN"
expect "-0 NUL separators" 0 "$(printf 'a/sub/y\0a/x\0b/x\0\0a/w\0b/w\0\0' | od -An -c)" sh -c '"$1" -r0 a b | od -An -c' sh "$DUPSCAN"
expect "-0 with -u" 0 "$(printf 'a/u\0' | od -An -c)" sh -c '"$1" -r0u a b | od -An -c' sh "$DUPSCAN"

# recursion: -r everywhere, -R only for paths after it
expect "no recursion without -r" 0 "$(printf 'a/w\nb/w\n\na/x\nb/x\n')" "$DUPSCAN" a b
expect "-R applies to later paths" 0 "$(printf 'a/w\nb/w\n\na/x\nb/x\n')" "$DUPSCAN" a -R b
expect "--recurse: applies to later paths" 0 "$(printf 'a/sub/y\na/x\nb/x\n\na/w\nb/w\n')" "$DUPSCAN" b --recurse: a
expect "options after paths" 0 "$(printf 'a/sub/y\na/x\nb/x\n\na/w\nb/w\n')" "$DUPSCAN" a b -r
expect "-- ends options" 0 "" "$DUPSCAN" -- c/1

# order
touch -d '2020-01-01 00:00:03' a/x; touch -d '2020-01-01 00:00:01' b/x; touch -d '2020-01-01 00:00:02' a/sub/y
touch -d '2020-01-01 00:00:05' a/w; touch -d '2020-01-01 00:00:00' b/w
expect "-o time, sets by their oldest file" 0 "$(printf 'b/w\na/w\n\nb/x\na/sub/y\na/x\n')" "$DUPSCAN" -r -o time a b
expect "--order=name" 0 "$(printf 'a/sub/y\na/x\nb/x\n\na/w\nb/w\n')" "$DUPSCAN" -r --order=name a b
expect "-i reverses files and sets" 0 "$(printf 'b/x\na/x\na/sub/y\n\nb/w\na/w\n')" "$DUPSCAN" -ri a b
expect "-O param order" 0 "$(printf 'b/w\na/w\n\nb/x\na/sub/y\na/x\n')" "$DUPSCAN" -rO b a
expect "-I isolate" 0 "$(printf 'a/sub/y\nb/x\n\na/w\nb/w\n')" "$DUPSCAN" -rI a b
expect "-I within one path" 0 "" "$DUPSCAN" -rI a
mk n/file10 num; mk n/file9 num; mk n/file009x q; mk n/file9x q
# (as in jdupes, a name ending right after a number sorts after one going on: file9 after file9x)
expect "numbers sort as numbers, fewer leading zeros first" 0 "$(printf 'n/file9x\nn/file009x\n\nn/file9\nn/file10\n')" "$DUPSCAN" n

# hard links: one path per inode, the first by name, whatever the walk order
mkdir h; mk h/m/orig linked; ln h/m/orig h/z-link; ln h/m/orig h/b-link; mk h/copy linked
expect "hard links are one file" 0 "$(printf 'h/b-link\nh/copy\n')" "$DUPSCAN" -r h
expect "-H lists every link" 0 "$(printf 'h/b-link\nh/copy\nh/m/orig\nh/z-link\n')" "$DUPSCAN" -rH h
expect "--hard-links, links alone" 0 "$(printf 'h/b-link\nh/m/orig\nh/z-link\n')" "$DUPSCAN" -r --hard-links h/b-link h/m h/z-link

# permissions
mk p/a perm; mk p/b perm; mk p/c perm; chmod 600 p/c
expect "without -p modes do not matter" 0 "$(printf 'p/a\np/b\np/c\n')" "$DUPSCAN" p
expect "-p splits by mode" 0 "$(printf 'p/a\np/b\n')" "$DUPSCAN" -p p

# hidden files and symlinks
mk s/.hid same; mk s/vis same; mk s/.hdir/f same
expect "hidden files count by default" 0 "$(printf 's/.hdir/f\ns/.hid\ns/vis\n')" "$DUPSCAN" -r s
mk s/vis2 same
expect "-A skips hidden" 0 "$(printf 's/vis\ns/vis2\n')" "$DUPSCAN" -rA s
mk l/real/f linkme; mk l/g linkme; ln -s real l/dirlink; ln -s g l/filelink
expect "symlinks ignored by default" 0 "$(printf 'l/g\nl/real/f\n')" "$DUPSCAN" -r l
# followed, dirlink and real are one directory (walked once), and filelink is a
# second path to g's inode, which sorts first
run "$DUPSCAN" -rs l
case "$out" in
  "$(printf 'l/dirlink/f\nl/filelink')"|"$(printf 'l/filelink\nl/real/f')") ok "-s follows, each file once" ;;
  *) not_ok "-s follows, each file once" "$out" ;;
esac
expect "-s -H: a symlinked file is another path to the inode" 0 "$(printf 'l/filelink\nl/g\n')" "$DUPSCAN" -sH l/filelink l/g

# files differing late; -Q and -TT
head -c 100000 /dev/urandom > big1; printf 'A' | dd of=big1 bs=1 seek=99999 conv=notrunc status=none
cp big1 big2; cp big1 big3; printf 'X' | dd of=big3 bs=1 seek=99999 conv=notrunc status=none  # always differs
expect "last byte differs" 0 "$(printf 'big1\nbig2\n')" "$DUPSCAN" big1 big2 big3
expect "-Q hashes only" 0 "$(printf 'big1\nbig2\n')" "$DUPSCAN" -Q big1 big2 big3
expect "-TT first block only" 0 "$(printf 'big1\nbig2\nbig3\n')" "$DUPSCAN" -TT big1 big2 big3
expect "--partial-only twice" 0 "$(printf 'big1\nbig2\nbig3\n')" "$DUPSCAN" --partial-only --partial-only big1 big2 big3
expect "-C small chunks" 0 "$(printf 'big1\nbig2\n')" "$DUPSCAN" -C 4096 big1 big2 big3
expect "--chunk-size=16777216" 0 "$(printf 'big1\nbig2\n')" "$DUPSCAN" --chunk-size=16777216 big1 big2 big3

# -1: only meaningful when two filesystems are at hand
other=$(mktemp -d /dev/shm/dupscan-XXXXXX 2>/dev/null || true)
if [ -n "$other" ] && [ "$(stat -c %d "$other")" != "$(stat -c %d .)" ]; then
  cp big1 "$other/big1"
  expect "-1 never matches across devices" 0 "" "$DUPSCAN" -1 big1 "$other/big1"
  expect "without -1 devices do not matter" 0 "$(printf '%s/big1\nbig1\n' "$other")" "$DUPSCAN" big1 "$other/big1"
  rm -rf "$other"
else
  [ -n "$other" ] && rm -rf "$other"
  ok "# SKIP -1: no second filesystem here"
fi
# -1 does not enter a filesystem mounted inside the tree, reached directly or
# through a followed symlink (find -xdev, jdupes -1)
if [ "$(id -u)" = 0 ] && mkdir -p xd/sub xd/far && mount -t tmpfs tmpfs xd/sub 2>/dev/null; then
  echo same > xd/a; echo same > xd/b; echo inside > xd/sub/c; echo inside > xd/sub/d
  ln -s sub xd/link
  expect "-r -1: nothing from a filesystem mounted below" 0 "$(printf 'xd/a\nxd/b\n')" "$DUPSCAN" -r -1 xd
  expect "-r -1 -s: nor through a symlink to it" 0 "$(printf 'xd/a\nxd/b\n')" "$DUPSCAN" -r -1 -s xd
  expect "-r without -1: it is entered" 0 "$(printf 'xd/a\nxd/b\n\nxd/sub/c\nxd/sub/d\n')" "$DUPSCAN" -r xd
  umount xd/sub
else
  ok "# SKIP -1 below a mount point needs root"
fi

expect "-v" 0 "$("$DUPSCAN" --version)" "$DUPSCAN" -v
run "$DUPSCAN" -v; case "$out" in "dupscan "[0-9]*) ok "-v names the version" ;; *) not_ok "-v names the version" "$out" ;; esac
# how it was built: threads as this build was configured, and the xxHash it runs with
# (the shared library the loader finds, its version from the library's own answer)
want_threads=$([ "${DUPSCAN_THREADS:-yes}" = yes ] && echo "threads (a reading and hashing pool)" || echo "no threads (reads in the caller's thread)")
xxh=$(python3 -c 'import ctypes, ctypes.util; v = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0").XXH_versionNumber(); print("%d.%d.%d" % (v // 10000, v // 100 % 100, v % 100))' 2>/dev/null)
if [ -n "$xxh" ]; then
  grep -qxF "Built with: $want_threads, xxHash $xxh" <<< "$out" && ok "-v: how it was built ($want_threads, xxHash $xxh)" ||
    not_ok "-v build line" "$out" "want: Built with: $want_threads, xxHash $xxh"
else
  echo "ok $((tap_n += 1)) # SKIP python cannot load libxxhash to ask its version"
fi
done_testing
