#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# -X: every filter, the documented combinations, boundaries, suffix arithmetic
# and every malformed spec; and the same sets as jdupes -X where it is installed.
. "$(dirname "$0")/../fixtures/lib.sh"
SRC=${SOURCE_ROOT:?}

pair() { # pair NAME SIZE: two identical files NAME.1 and NAME.2 of SIZE bytes
  head -c "$2" /dev/urandom > "t/$1.1"; cp "t/$1.1" "t/$1.2"
}
mkdir t
pair s99 99; pair s100 100; pair s101 101; pair s4096 4096; pair s16000 16000; pair s16384 16384
sets() { "$DUPSCAN" -q "$@" t | tr '\n' ' ' | sed 's/  */ /g; s/ $//'; }
check_sets() { # NAME EXPECTED ARGS...
  local name=$1 want=$2; shift 2
  local got; got=$(sets "$@")
  [ "$got" = "$want" ] && ok "$name" || not_ok "$name" "got: $got" "want: $want"
}
check_sets "size+ excludes N itself" "t/s101.1 t/s101.2 t/s4096.1 t/s4096.2 t/s16000.1 t/s16000.2 t/s16384.1 t/s16384.2" -X size+:100
check_sets "size+= includes N" "t/s100.1 t/s100.2 t/s101.1 t/s101.2 t/s4096.1 t/s4096.2 t/s16000.1 t/s16000.2 t/s16384.1 t/s16384.2" -X size+=:100
check_sets "size- excludes N itself" "t/s99.1 t/s99.2" -X size-:100
check_sets "size-= includes N" "t/s99.1 t/s99.2 t/s100.1 t/s100.2" -X size-=:100
check_sets "size= exactly N" "t/s100.1 t/s100.2" -X size=:100
check_sets "cumulative size+:99 size-:101" "t/s100.1 t/s100.2" -X size+:99 -X size-:101
check_sets "--ext-filter=" "t/s100.1 t/s100.2" --ext-filter=size=:100
check_sets "16k = 16384" "t/s16384.1 t/s16384.2" -X size=:16k
check_sets "16kib = 16384" "t/s16384.1 t/s16384.2" -X size=:16kib
check_sets "16KiB = 16384" "t/s16384.1 t/s16384.2" -X size=:16KiB
check_sets "16kb = 16000" "t/s16000.1 t/s16000.2" -X size=:16kb
check_sets "16KB = 16000" "t/s16000.1 t/s16000.2" -X size=:16KB
check_sets "100b = 100" "t/s100.1 t/s100.2" -X size=:100b
check_sets "4K = 4096" "t/s4096.1 t/s4096.2" -X size=:4K
check_sets "size-:1M keeps all" "$(sets)" -X size-:1M
check_sets "size+:1mb keeps none" "" -X size+:1mb
check_sets "largest size accepted" "" -X size+=:9223372036854775807

rm -rf t; mkdir -p t/sub t/d.txt t/SUB
for f in a.txt b.TXT c.jpg d.tar.gz e f. d.txt/g sub/h.txt SUB/i.jpg SUB/j.txt; do printf 'same' > "t/$f"; done
# (jdupes' name order: letters compare without case)
check_sets "noext, case-insensitive" "t/c.jpg t/d.tar.gz t/d.txt/g t/e t/f. t/SUB/i.jpg" -r -X noext:txt
check_sets "onlyext list" "t/a.txt t/b.TXT t/c.jpg t/sub/h.txt t/SUB/i.jpg t/SUB/j.txt" -r -X onlyext:jpg,txt
check_sets "onlyext last dot only" "" -r -X onlyext:tar
check_sets "onlyext gz,jpg" "t/c.jpg t/d.tar.gz t/SUB/i.jpg" -r -X onlyext:gz,jpg
check_sets "a dot in a directory is no extension, empty items skipped" "t/a.txt t/b.TXT t/sub/h.txt t/SUB/j.txt" -r -X onlyext:,txt,,
check_sets "nostr: a directory" "t/a.txt t/b.TXT t/c.jpg t/d.tar.gz t/d.txt/g t/e t/f. t/SUB/i.jpg t/SUB/j.txt" -r -X nostr:/sub/
check_sets "onlystr: case-sensitive" "t/SUB/i.jpg t/SUB/j.txt" -r -X onlystr:/SUB/
check_sets "onlystr: lower case is another string" "" -r -X onlystr:/sub/
check_sets "onlystr: substring" "t/d.tar.gz t/d.txt/g" -r -X onlystr:t/d.t

rm -rf t; mkdir t
for n in old1 old2; do printf 'o' > "t/$n"; touch -d '2020-01-01 00:00:00' "t/$n"; done
for n in new1 new2; do printf 'n' > "t/$n"; touch -d '2022-06-01 12:00:00' "t/$n"; done
check_sets "newer" "t/new1 t/new2" -X newer:2021-01-01
check_sets "older" "t/old1 t/old2" -X older:2021-01-01
check_sets "newer includes the exact second" "t/new1 t/new2 t/old1 t/old2" -X 'newer:2020-01-01 00:00:00'
check_sets "older excludes the exact second" "" -X 'older:2020-01-01 00:00:00'
check_sets "older one second later" "t/old1 t/old2" -X 'older:2020-01-01 00:00:01'
check_sets "newer and older together" "t/new1 t/new2" -X newer:2022-06-01 -X 'older:2022-06-01 12:00:01'
# past 2038: a 32-bit build must have a 64-bit time_t
for n in far1 far2; do printf 'f' > "t/$n"; touch -d '2040-06-01 00:00:00' "t/$n"; done
check_sets "a file dated 2040 is scanned like any other" "t/far1 t/far2 t/new1 t/new2 t/old1 t/old2"
check_sets "newer: a date past 2038" "t/far1 t/far2" -X newer:2039-01-01
check_sets "older: a date past 2038" "t/new1 t/new2 t/old1 t/old2" -X older:2039-01-01

# malformed specs: status 2, the spec quoted, nothing scanned (the missing path
# would be reported if it were)
bad() {
  run "$DUPSCAN" -X "$1" no-such-path
  if [ "$rc" = 2 ] && [ -z "$out" ] && printf '%s' "$err" | grep -qF -- "'$1'" && ! printf '%s' "$err" | grep -q no-such-path; then
    ok "malformed: $1"
  else
    not_ok "malformed: $1" "status $rc" "stderr: $err"
  fi
}
for spec in foo:1 sizes:1 size size+ size+: size=+:1 noext: onlyext: onlyext:,, nostr: onlystr: newer: \
  size+:abc size+:-5 size+:10q size+:16kibb size+:16ki size+:k size+:1.5k size+:9223372036854775808 size+:8E \
  size+:8192P size+:99999999999999999999 newer:2023-13-01 newer:2023-02-30 'newer:2023-01-01 25:00:00' \
  newer:yesterday newer:2023-1-1 'older:2023-01-01 12:00' older:1899-12-31; do
  bad "$spec"
done
run "$DUPSCAN" -X help
case "$out" in *noext:*onlyext:*size*nostr:*onlystr:*newer:*older:*) [ "$rc" = 0 ] && ok "-X help" || not_ok "-X help status" "$rc" ;; *) not_ok "-X help" "$out" ;; esac

# the same sets as jdupes 1.21 with the same filters
if command -v jdupes >/dev/null; then
  rm -rf t; mkdir -p t/sub t/x.d
  for i in 1 2 3; do
    head -c 100 /dev/zero > "t/z$i.dat"; head -c 4096 /dev/zero | tr '\0' a > "t/sub/a$i.TXT"
    head -c 16384 /dev/zero | tr '\0' b > "t/x.d/b$i.jpg"; printf 'tiny' > "t/sub/tiny$i"
  done
  touch -d '2019-05-05 10:00:00' t/z1.dat t/sub/a1.TXT
  for spec in size+:100 size+=:100 size-:4096 size-=:4K size=:16k size=:16kb noext:txt onlyext:jpg,dat \
    nostr:/sub/ onlystr:x.d newer:2020-01-01 older:2020-01-01 'older:2019-05-05 10:00:01'; do
    "$DUPSCAN" -rq -X "$spec" t > ds.out; jdupes -rq -X "$spec" t > jd.out 2>/dev/null
    run python3 "$SRC/tests/fixtures/setcmp.py" ds.out jd.out
    [ "$rc" = 0 ] && ok "as jdupes: -X $spec ($out)" || not_ok "as jdupes: -X $spec" "$out"
  done
else
  ok "# SKIP jdupes not installed"
fi
done_testing
