#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -P early|partial|fullhash: the groups that pass each stage, in jdupes' format.
. "$(dirname "$0")/../fixtures/lib.sh"
# a's first and last bytes are 'A', so the 'Z's below always make c and d differ
head -c 10000 /dev/urandom > a
printf 'A' | dd of=a bs=1 seek=0 conv=notrunc status=none; printf 'A' | dd of=a bs=1 seek=9999 conv=notrunc status=none
cp a b
cp a c; printf 'Z' | dd of=c bs=1 seek=9999 conv=notrunc status=none   # same first block
cp a d; printf 'Z' | dd of=d bs=1 seek=0 conv=notrunc status=none      # other first block
head -c 20 /dev/urandom > e
sets=$(printf 'a\nb\n')
expect "-P early" 0 "$(printf 'Early match check passed:\n   a\n   b\n   c\n   d\n\n%s\n' "$sets")" "$DUPSCAN" -P early a b c d e
expect "-P partial" 0 "$(printf '\nPartial hashes match:\n   a\n   b\n   c\n\n%s\n' "$sets")" "$DUPSCAN" -P partial a b c d e
expect "--print=fullhash" 0 "$(printf 'Full hashes match:\n   a\n   b\n\n%s\n' "$sets")" "$DUPSCAN" --print=fullhash a b c d e
expect "all stages in order" 0 "$(printf 'Early match check passed:\n   a\n   b\n   c\n   d\n\n\nPartial hashes match:\n   a\n   b\n   c\n\nFull hashes match:\n   a\n   b\n\n%s\n' "$sets")" "$DUPSCAN" -P early -P partial -P fullhash e d c b a
expect "bad -P value" 2 "" "$DUPSCAN" -P everything a
expect_err "bad -P named" "invalid value 'everything' for -P/--print"
done_testing
