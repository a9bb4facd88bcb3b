#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --dirs: directories whose whole content is identical, whatever the names, every
# file pair confirmed; what is inside a listed directory set is not listed again
# unless a copy lies outside it.
. "$(dirname "$0")/../fixtures/lib.sh"

# the issue's case: A = B, A1 = B1 inside them, C1 elsewhere equal to B1
mkdir -p t/A/A1 t/B/B1 t/elsewhere/C1
for d in A B; do echo one > t/$d/f1; echo two > t/$d/f2; echo sub1 > t/$d/${d}1/s; echo sub2 > t/$d/${d}1/t; done
cp t/B/B1/s t/B/B1/t t/elsewhere/C1/; echo loner > t/elsewhere/x
expect "A = B listed, A1 = B1 = C1 listed, files inside not repeated" 0 "t/A/
t/B/

t/A/A1/
t/B/B1/
t/elsewhere/C1/" "$DUPSCAN" -rq --dirs t
expect "without C1: A1 and B1 are covered by A and B" 0 "t/A/
t/B/" "$DUPSCAN" -rq --dirs t/A t/B
# a file with a copy outside the listed directories is listed with all its copies
echo one > t/elsewhere/f1copy
expect "a file copy outside: its whole set is listed" 0 "t/A/
t/B/

t/A/A1/
t/B/B1/
t/elsewhere/C1/

t/A/f1
t/B/f1
t/elsewhere/f1copy" "$DUPSCAN" -rq --dirs t
rm t/elsewhere/f1copy

# names do not matter, content does
rm -rf u; mkdir -p u/p/deep/er u/q/other/place
echo alpha > u/p/a; echo beta > u/p/deep/er/b; head -c 9000 /dev/urandom > u/p/deep/er/big
cp u/p/a u/q/renamed; cp u/p/deep/er/b u/q/other/place/x; cp u/p/deep/er/big u/q/other/place/y
expect "renamed files and directories: still duplicates" 0 "u/p/
u/q/" "$DUPSCAN" -rq --dirs u
: > u/q/extra
expect "an extra empty file: not duplicates any more (subdirectories still are)" 0 "u/p/deep/
u/q/other/

u/p/a
u/q/renamed" "$DUPSCAN" -rq --dirs u
rm u/q/extra
flip_byte u/q/other/place/y 4500
run "$DUPSCAN" -rq --dirs u
[ "$rc" = 0 ] && ! printf '%s' "$out" | grep -q '/$' && ok "a byte differing deep inside: no directory at any level" || not_ok "deep byte" "$out"
cp u/p/deep/er/big u/q/other/place/y
# the same multiset of contents counts: two copies of one file against one
rm -rf v; mkdir -p v/a v/b; echo k > v/a/1; echo k > v/a/2; echo k > v/b/1; echo j > v/b/2
run "$DUPSCAN" -rq --dirs v
! printf '%s' "$out" | grep -q '/$' && ok "equal names, different multisets: not duplicates" || not_ok "multiset" "$out"

# empty directories only with -z
rm -rf e; mkdir -p e/one e/two e/full1 e/full2; echo z > e/full1/f; echo z > e/full2/f
expect "empty directories are not duplicates" 0 "e/full1/
e/full2/" "$DUPSCAN" -rq --dirs e
expect "-z: empty directories are" 0 "e/full1/
e/full2/

e/one/
e/two/" "$DUPSCAN" -rqz --dirs e
# the directory keyed first (the last the walk added) empty: its empty list
# was once copied from a null pointer (UBSan, on tmpfs's listing order)
rm -rf z; mkdir -p z/only; echo a > z/a; echo a > z/b
expect "--dirs with an empty directory keyed first" 0 "z/a
z/b" "$DUPSCAN" -rq --dirs z

# what cannot be compared keeps a directory out
rm -rf w; mkdir -p w/a w/b; echo q > w/a/f; echo q > w/b/f
mkfifo w/a/pipe
run "$DUPSCAN" -rq --dirs w
[ "$out" = "w/a/f
w/b/f" ] && ok "a FIFO inside: the directory is not a duplicate, its files are listed" || not_ok "fifo" "$out"
rm w/a/pipe; ln -s f w/a/link
run "$DUPSCAN" -rq --dirs w
[ "$out" = "w/a/f
w/b/f" ] && ok "a symlink not followed inside: not a duplicate" || not_ok "symlink" "$out"
rm w/a/link
expect "(the pair again without them)" 0 "w/a/
w/b/" "$DUPSCAN" -rq --dirs w
echo q > w/b/g; echo q > w/a/g
if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 w; as=(setpriv --reuid=65534 --regid=65534 --clear-groups); else as=(); fi
chmod 000 w/b/g
run "${as[@]}" "$DUPSCAN" -rq --dirs w
chmod 644 w/b/g
[ "$rc" = 1 ] && ! printf '%s' "$out" | grep -q '/$' && ok "an unreadable file inside: not a duplicate, status 1" || not_ok "unreadable" "rc $rc" "$out"
# the user's filters decide what counts
echo only-in-a > w/a/note.tmp
expect "--exclude: excluded files do not count" 0 "w/a/
w/b/" "$DUPSCAN" -rq --dirs --exclude='*.tmp' w

# output forms
run "$DUPSCAN" -rqS --dirs t/A t/B
[ "$(printf '%s' "$out" | head -1)" = "18 bytes each:" ] && ok "-S: a directory's size is the total of its files" || not_ok "-S" "$out"
run "$DUPSCAN" -rqj --dirs t/A t/B
printf '%s' "$out" | python3 -c 'import json,sys; d=json.load(sys.stdin); assert [f["filePath"] for f in d["matchSets"][0]["fileList"]] == ["t/A/", "t/B/"]' && ok "-j: directory paths end with /" || not_ok "-j" "$out"
run "$DUPSCAN" -rq --dirs -dN t
[ "$rc" = 2 ] && expect_err "--dirs with an action: usage error" "refused with -d"
run "$DUPSCAN" -rq --dirs -Q t
[ "$rc" = 2 ] && expect_err "--dirs with -Q: usage error" "byte by byte"
done_testing
