#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --exclude and --include: fnmatch per component on the path below each argument,
# "**" across directories, bare names at any depth, and directory patterns that
# prune the walk (the pruned directory is never opened).
. "$(dirname "$0")/../fixtures/lib.sh"

rm -rf t; mkdir -p t/a/b/c t/sub t/deep/sub t/cache t/a/cache t/.git t/photos/2020
for f in t/x.txt t/a/x.txt t/a/b/x.txt t/a/b/c/x.txt t/sub/f.txt t/deep/sub/f.txt t/x.tmp t/a/y.tmp \
         t/cache/k t/a/cache/k t/.git/obj t/photos/2020/img.jpg t/photos/img.JPG t/a/pic.jpg; do
  echo same > "$f"
done
# sets: the files found, in output order, as one line
files() { "$DUPSCAN" -rq "$@" | grep -v '^$' | tr '\n' ' ' | sed 's/ $//'; }
check() { # NAME EXPECTED ARGS...
  local name=$1 want=$2; shift 2
  local got; got=$(files "$@")
  [ "$got" = "$want" ] && ok "$name" || not_ok "$name" "got:  $got" "want: $want" "args: $*"
}
all=$(files t)
[ "$(echo "$all" | wc -w)" = 14 ] && ok "the tree: 14 equal files" || not_ok "tree" "$all"
check "bare name pattern: any depth" "$(echo "$all" | tr ' ' '\n' | grep -v '\.tmp$' | tr '\n' ' ' | sed 's/ $//')" --exclude='*.tmp' t
check "'*' never crosses '/'" "$(echo "$all" | tr ' ' '\n' | grep -vx 't/a/x.txt' | tr '\n' ' ' | sed 's/ $//')" --exclude='a/*.txt' t
check "'**' spans any number of directories, zero included" "$(echo "$all" | tr ' ' '\n' | grep -vE '^t/a/(b/(c/)?)?x\.txt$' | tr '\n' ' ' | sed 's/ $//')" --exclude='a/**/x.txt' t
check "a pattern with '/' is anchored at the argument" "$(echo "$all" | tr ' ' '\n' | grep -vx 't/sub/f.txt' | tr '\n' ' ' | sed 's/ $//')" --exclude='sub/f.txt' t
check "leading '**/' matches at any depth" "$(echo "$all" | tr ' ' '\n' | grep -v '/sub/f.txt$' | tr '\n' ' ' | sed 's/ $//')" --exclude='**/sub/f.txt' t
check "directory pattern prunes every directory of that name" "$(echo "$all" | tr ' ' '\n' | grep -v '/cache/' | tr '\n' ' ' | sed 's/ $//')" --exclude='cache/' t
check "anchored directory pattern prunes only that one" "$(echo "$all" | tr ' ' '\n' | grep -vx 't/a/cache/k' | tr '\n' ' ' | sed 's/ $//')" --exclude='a/cache/' t
check "a file pattern does not prune a directory of that name" "$all" --exclude='cache' t
check "hidden directories match like others" "$(echo "$all" | tr ' ' '\n' | grep -v '\.git' | tr '\n' ' ' | sed 's/ $//')" --exclude='.git/' t
check "repeatable" "$(echo "$all" | tr ' ' '\n' | grep -v '\.tmp$' | grep -v '/cache/' | tr '\n' ' ' | sed 's/ $//')" --exclude='*.tmp' --exclude='cache/' t
check "--include: only matching files" "t/a/pic.jpg t/photos/2020/img.jpg" --include='*.jpg' t
check "--include is case-sensitive, repeatable" "t/a/pic.jpg t/photos/2020/img.jpg t/photos/img.JPG" --include='*.jpg' --include='*.JPG' t
check "--include of a directory: the files under it" "t/photos/2020/img.jpg t/photos/img.JPG" --include='photos/' t
check "an exclusion wins over an inclusion" "t/a/pic.jpg t/photos/img.JPG" --include='*.jpg' --include='*.JPG' --exclude='2020/' t
check "relative to each argument" "t/a/b/x.txt t/a/x.txt t/x.txt" --include='**/x.txt' --exclude='c/' t/a t/x.txt
check "anchored patterns start below the argument" "t/a/b/c/x.txt t/a/x.txt" --include='x.txt' --exclude='b/x.txt' t/a
check "a file given directly is matched by its name" "t/a/x.txt t/sub/f.txt" --exclude='x.tmp' t/a/x.txt t/sub/f.txt t/x.tmp
check "globs combine with -X" "t/a/b/c/x.txt t/a/b/x.txt t/a/x.txt t/x.txt" --include='*.txt' -X nostr:sub t

# a pruned directory is never opened: unreadable, it gives no error
mkdir -p u/keep u/locked/inner; echo z > u/keep/a; echo z > u/keep/b; echo z > u/locked/inner/c
if [ "$(id -u)" = 0 ]; then chown -R 65534:65534 u; as=(setpriv --reuid=65534 --regid=65534 --clear-groups); else as=(); fi
chmod 000 u/locked
run "${as[@]}" "$DUPSCAN" -rq u
[ "$rc" = 1 ] && expect_err "(an unreadable directory that is walked is an error)" "u/locked"
run "${as[@]}" "$DUPSCAN" -rq --exclude='locked/' u
[ "$rc" = 0 ] && [ -z "$err" ] && [ "$out" = "u/keep/a
u/keep/b" ] && ok "a pruned directory is never opened: no error, status 0" || not_ok "pruned never opened" "rc $rc" "$err" "$out"
chmod 755 u/locked

run "$DUPSCAN" -r --exclude= t
[ "$rc" = 2 ] && expect_err "empty pattern: usage error" "invalid pattern '' for --exclude"
run "$DUPSCAN" -r --include=/ t
[ "$rc" = 2 ] && expect_err "'/' alone: usage error" "invalid pattern '/' for --include"
done_testing
