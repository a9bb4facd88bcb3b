#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Files given directly, --files-from (newline or NUL separated, from a file or
# stdin), and -e/--error-on-dupe.
. "$(dirname "$0")/../fixtures/lib.sh"

rm -rf t; mkdir -p t/d1 t/d2 t/d3/sub
echo one > t/d1/a; cp t/d1/a t/d2/a; cp t/d1/a t/d3/sub/a
echo two > t/d1/b; cp t/d1/b "t/d2/b with
newline"
echo lone > t/d1/lone

expect "a file given directly takes part like a walked one" 0 "t/d1/a
t/d2/a
t/d3/sub/a" "$DUPSCAN" -rq t/d1/a t/d2 t/d3

printf 't/d1/a\nt/d2\n\nt/d3\n' > list
expect "--files-from: one path per line, empty lines skipped, -r applies" 0 "t/d1/a
t/d2/a
t/d3/sub/a" "$DUPSCAN" -rq --files-from=list
expect "--files-from without -r: directories not descended" 0 "t/d1/a
t/d2/a" "$DUPSCAN" -q --files-from=list
printf 't/d1/a\n' > list1
expect "--files-from joins the command line's paths" 0 "t/d1/a
t/d2/a" "$DUPSCAN" -q --files-from=list1 t/d2/a
printf 't/d3/sub/a\nt/d2/a\n' > slist
run "$DUPSCAN" -q --files-from=- < slist
[ "$rc" = 0 ] && [ "$out" = "t/d2/a
t/d3/sub/a" ] && ok "--files-from=- reads stdin" || not_ok "--files-from=-" "$out" "$err"
printf 't/d1/b\0t/d2/b with\nnewline\0' > nlist
"$DUPSCAN" -q0 --files-from=nlist > nout
[ "$(od -An -c nout | tr -s ' ')" = "$(printf 't/d1/b\0t/d2/b with\nnewline\0\0' | od -An -c | tr -s ' ')" ] && ok "-0 --files-from: NUL-separated names, a newline inside one" || not_ok "-0 --files-from" "$(od -c nout)"
find t -type f -print0 | "$DUPSCAN" -q0 --files-from=- > fout
[ "$(tr '\0' '\n' < fout | grep -c .)" = 6 ] && ok "find -print0 | dupscan -0 --files-from=-" || not_ok "find -print0 pipe" "$(od -c fout | head)"

run "$DUPSCAN" -q --files-from=nlist
[ "$rc" = 2 ] && expect_err "a NUL inside a newline-separated list: usage error" "holds a NUL byte"
run "$DUPSCAN" -q --files-from=missing
[ "$rc" = 2 ] && expect_err "--files-from of a missing file: usage error naming it" "--files-from 'missing': $E_NOENT"
: > empty
run "$DUPSCAN" -q --files-from=empty
[ "$rc" = 2 ] && expect_err "an empty list and no paths: usage error" "no paths in --files-from"
printf 't/d1/a\nt/nowhere\nt/d2/a\n' > blist
run "$DUPSCAN" -q --files-from=blist
[ "$rc" = 1 ] && [ "$out" = "t/d1/a
t/d2/a" ] && expect_err "a missing path in the list: reported, the rest scanned, status 1" "t/nowhere: $E_NOENT"

# -e
run "$DUPSCAN" -rqe t
[ "$rc" = 255 ] && [ -z "$out" ] && expect_err "-e: status 255, first pair on stderr, nothing on stdout" "duplicates found.*
  t/d1/a
  t/d2/a"
expect "-e without duplicates: status 0" 0 "" "$DUPSCAN" -rq --error-on-dupe t/d1
run "$DUPSCAN" -rqe -dN t
[ "$rc" = 2 ] && expect_err "-e with an action: usage error" "refused with -d"
done_testing
