#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --max-depth=N (fclones --depth, rmlint -d): directories more than N levels
# below each argument are not entered; it needs recursion; a directory whose
# subdirectories were not entered is never a duplicate directory (--dirs).
. "$(dirname "$0")/../fixtures/lib.sh"

mkdir -p t/a/b/c t/x
for d in t t/a t/a/b t/a/b/c t/x; do echo same > "$d/f"; done
expect "--max-depth=0: the argument's own files only (one: no set)" 0 "" "$DUPSCAN" -rq --max-depth=0 t
expect "--max-depth=1" 0 "t/a/f
t/f
t/x/f" "$DUPSCAN" -rq --max-depth=1 t
expect "--max-depth=2" 0 "t/a/b/f
t/a/f
t/f
t/x/f" "$DUPSCAN" -rq --max-depth=2 t
expect "--max-depth=3: everything, as without it" 0 "$("$DUPSCAN" -rq t)" "$DUPSCAN" -rq --max-depth=3 t
expect "depth counts from each argument" 0 "t/a/b/c/f
t/a/b/f
t/a/f
t/x/f" "$DUPSCAN" -rq --max-depth=1 t/a/b t/a t/x
expect "with -R: for the directories after it" 0 "t/a/b/c/f
t/a/b/f
t/a/f" "$DUPSCAN" -q t/a -R --max-depth=1 t/a/b

run "$DUPSCAN" -q --max-depth=1 t
[ "$rc" = 2 ] && expect_err "without -r or -R: usage error (it would limit nothing)" "limits recursion"
for bad in -1 x 1x ""; do
  run "$DUPSCAN" -rq --max-depth="$bad" t
  [ "$rc" = 2 ] && expect_err "--max-depth='$bad': usage error" "invalid value '$bad' for --max-depth"
done

# identical directories: A and B whole within the limit are listed; cut by it, never
mkdir -p u/A/sub u/B/sub
for d in A B; do echo one > u/$d/f; echo two > u/$d/sub/g; done
expect "--dirs --max-depth=2: A and B whole, listed" 0 "u/A/
u/B/" "$DUPSCAN" -rq --dirs --max-depth=2 u
expect "--dirs --max-depth=1: A and B not entered below, only their files listed" 0 "u/A/f
u/B/f" "$DUPSCAN" -rq --dirs --max-depth=1 u
done_testing
