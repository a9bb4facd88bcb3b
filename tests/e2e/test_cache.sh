#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --cache: hashes kept between runs, keyed on device, inode, size, mtime and
# ctime; a cached hash spares reading first blocks and hashing but never the
# byte-by-byte comparison; damaged caches are reported and ignored; two runs at
# once share one cache. A file never opened is shown with the fault shim: an
# open of it would fail and be reported.
. "$(dirname "$0")/../fixtures/lib.sh"
export XDG_CACHE_HOME="$T/.cache"

tree() {
  rm -rf t; mkdir -p t/d
  head -c 20000 /dev/urandom > t/a; cp t/a t/d/a2                       # a pair
  head -c 20000 /dev/urandom > t/victim                                  # same size, other first block
  head -c 20000 /dev/urandom > t/x; cp t/x t/y; flip_byte t/y 19000  # same first block, other end
  head -c 300 /dev/urandom > t/small1; cp t/small1 t/small2
}
entries() { od -An -t u8 -j 16 -N 8 "$1" | tr -d ' '; }
tree
plain=$("$DUPSCAN" -rq t)
run "$DUPSCAN" -rq --cache=c.bin t
[ "$rc" = 0 ] && [ "$out" = "$plain" ] && [ -z "$err" ] && [ -s c.bin ] && ok "first run: same sets, cache written" || not_ok "first run" "$rc" "$out" "$err"
[ "$(head -c 8 c.bin)" = DUPSCANH ] && [ "$(entries c.bin)" = 7 ] && ok "cache holds one entry per file hashed (7)" || not_ok "entries" "$(entries c.bin)"
run "$DUPSCAN" -rq --cache=c.bin t
[ "$rc" = 0 ] && [ "$out" = "$plain" ] && ok "second run: same sets" || not_ok "second run" "$out" "$err"

if [ -n "${FAULT_LIB:-}" ]; then
  fault() { DUPSCAN_FAULT="$1" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" "${@:2}"; }
  run fault "open64:victim:EIO" -rq t
  [ "$rc" = 1 ] && expect_err "(without the cache the unique file is opened: the fault shows)" "t/victim: $E_IO"
  run fault "open64:victim:EIO" -rq --cache=c.bin t
  [ "$rc" = 0 ] && [ -z "$err" ] && [ "$out" = "$plain" ] && ok "with the cache a file unique by its hashes is never opened" || not_ok "cache hit" "$rc" "$err"
  run fault "open64:t/y:EIO" -rq --cache=c.bin t
  [ "$rc" = 1 ] && expect_err "a shared first block with no full hash cached (x, y differ at the end) is compared again" "t/y: $E_IO"
  run fault "open64:d/a2:EIO" -rq --cache=c.bin t
  [ "$rc" = 1 ] && expect_err "a cached duplicate is still compared byte by byte (opened)" "t/d/a2: $E_IO"
else
  echo "# skipped: the fault shim is not built here (sanitizer build)"
fi

# a stale cache must never hide a duplicate: each key field invalidates
tree; rm -f c.bin; "$DUPSCAN" -rq --cache=c.bin t > /dev/null
cp t/a new; touch -r t/victim new; cat new > t/victim; touch -r new t/victim   # same size and mtime, new content (ctime moves)
run "$DUPSCAN" -rq --cache=c.bin t
printf '%s' "$out" | grep -qx "t/victim" && ok "rewritten with size and mtime restored (ctime changed): the new twin is found" || not_ok "ctime key" "$out"
tree; rm -f c.bin; "$DUPSCAN" -rq --cache=c.bin t > /dev/null
cp -p t/a t/victim.new; touch -r t/victim t/victim.new; mv t/victim.new t/victim          # another inode, same size and mtime
run "$DUPSCAN" -rq --cache=c.bin t
printf '%s' "$out" | grep -qx "t/victim" && ok "replaced by another inode: the new twin is found" || not_ok "inode key" "$out"
tree; rm -f c.bin; "$DUPSCAN" -rq --cache=c.bin t > /dev/null
head -c 20000 t/y > t/z; cp t/z t/zz; echo more >> t/z; echo more >> t/zz                 # sizes change, still a pair
run "$DUPSCAN" -rq --cache=c.bin t
printf '%s' "$out" | grep -qx "t/zz" && ok "a new size: hashed again" || not_ok "size key" "$out"
touch -d '2001-01-01' t/x; touch -d '2001-01-01' t/y
run "$DUPSCAN" -rq --cache=c.bin t
[ "$rc" = 0 ] && ok "touched files: hashed again, no error" || not_ok "touch" "$err"

# hdd mode: groups with cached twins still go through the disk-ordered passes; same sets
tree; rm -f c.bin; plain=$("$DUPSCAN" -rq t)
run "$DUPSCAN" -rq --io=hdd --cache=c.bin t
[ "$rc" = 0 ] && [ "$out" = "$plain" ] && ok "--io=hdd --cache, first run: same sets" || not_ok "hdd first" "$out" "$err"
run "$DUPSCAN" -rq --io=hdd --cache=c.bin t
[ "$rc" = 0 ] && [ "$out" = "$plain" ] && [ -z "$err" ] && ok "--io=hdd --cache, second run: same sets" || not_ok "hdd second" "$out" "$err"
if [ -n "${FAULT_LIB:-}" ]; then
  # victim shares its size with a pair: its group is read again, in disk order
  run env DUPSCAN_FAULT="open64:victim:EIO" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --io=hdd --cache=c.bin t
  [ "$rc" = 1 ] && expect_err "--io=hdd: a group with cached twins goes through the passes (victim read again)" "t/victim: $E_IO"
  # a group its cached hashes settle alone is never opened
  rm -rf s; mkdir s; head -c 9000 /dev/urandom > s/p; head -c 9000 /dev/urandom > s/q
  "$DUPSCAN" -rq --io=hdd --cache=s.bin s > /dev/null
  run env DUPSCAN_FAULT="open64:s/:EIO" LD_PRELOAD="$FAULT_LIB" "$DUPSCAN" -rq --io=hdd --cache=s.bin s
  [ "$rc" = 0 ] && [ -z "$out" ] && [ -z "$err" ] && ok "--io=hdd: a group its cached hashes settle is never opened" || not_ok "hdd settled" "$rc" "$err"
fi

# damaged caches: reported, ignored, rewritten
tree; rm -f c.bin; "$DUPSCAN" -rq --cache=c.bin t > /dev/null; plain=$("$DUPSCAN" -rq t)
for damage in truncate flip magic empty version; do
  cp c.bin good.bin
  case $damage in
    truncate) head -c 200 good.bin > c.bin ;;
    flip) cp good.bin c.bin; flip_byte c.bin 100 ;;
    magic) cp good.bin c.bin; flip_byte c.bin 0 ;;   # its sizes still add up: a cache
    empty) : > c.bin ;;
    version) cp good.bin c.bin; flip_byte c.bin 8 ;;
  esac
  run "$DUPSCAN" -rq --cache=c.bin t
  [ "$rc" = 0 ] && [ "$out" = "$plain" ] && printf '%s' "$err" | grep -q "c.bin: Hash cache damaged or of another version: ignored, and rewritten" && ok "$damage cache: reported, ignored, status 0" || not_ok "$damage cache" "$rc" "$err"
  run "$DUPSCAN" -rq --cache=c.bin t
  [ -z "$err" ] && [ "$out" = "$plain" ] && ok "$damage cache: rewritten whole" || not_ok "$damage rewrite" "$err"
done

# another file at the cache's path (random bytes: a photo, a document given
# by mistake) is no damaged cache: named, left as it is, and no cache is
# used (status 1, as for a cache that cannot be read)
head -c 5000 /dev/urandom > c.bin; cp c.bin garbage.bin; rm -f c.bin.lock c.bin.log
run "$DUPSCAN" -rq --cache=c.bin t
[ "$rc" = 1 ] && [ "$out" = "$plain" ] && cmp -s c.bin garbage.bin && [ ! -e c.bin.lock ] &&
  printf '%s' "$err" | grep -q "c.bin: Not a dupscan hash cache: left as it is" &&
  ok "another file at the cache's path: named, left as it is, the same sets" || not_ok "garbage cache" "$rc" "$err"

# a cache that cannot be made: named as the cache (not as a scanned path),
# once for the file, its log and its lock; the scan goes on; status 1
run "$DUPSCAN" -rq --cache="$T/no/such/dir/c" t
[ "$rc" = 1 ] && [ "$out" = "$plain" ] && [ "$err" = "dupscan: cache $T/no/such/dir/c: $E_NOENT; running without a cache" ] &&
  ok "a cache in a missing directory: one line naming the cache, the same sets, status 1" ||
  not_ok "missing cache directory" "$rc" "$err"
# one that cannot be written (a directory the user may not write; root may write anywhere)
mkdir -p rodir; chmod 555 rodir
if [ "$(id -u)" = 0 ]; then as=(setpriv --reuid=65534 --regid=65534 --clear-groups); chmod -R a+rX t; chmod a+x "$T"; else as=(); fi
if "${as[@]}" sh -c ': > rodir/probe' 2>/dev/null; then
  echo "ok $((tap_n += 1)) # SKIP this user may write a read-only directory"
else
  run "${as[@]}" "$DUPSCAN" -rq --cache="$T/rodir/c" t
  [ "$rc" = 1 ] && [ "$out" = "$plain" ] && [ "$err" = "dupscan: cache $T/rodir/c: $E_ACCES; running without a cache" ] &&
    ok "a cache that cannot be written: named once, the same sets, status 1" || not_ok "unwritable cache" "$rc" "$err"
fi

# two runs at once on one cache: both finish, the cache keeps both trees
rm -rf p q c.bin; mkdir p q
for i in $(seq 200); do head -c $((i * 37)) /dev/urandom > p/f$i; cp p/f$i p/g$i; head -c $((i * 37 + 1)) /dev/urandom > q/f$i; cp q/f$i q/g$i; done
"$DUPSCAN" -rq --cache=c.bin p > p.out 2> p.err & a=$!
"$DUPSCAN" -rq --cache=c.bin q > q.out 2> q.err & b=$!
wait $a; ra=$?; wait $b; rb=$?
[ "$ra" = 0 ] && [ "$rb" = 0 ] && [ ! -s p.err ] && [ ! -s q.err ] && [ "$(grep -c . p.out)" = 400 ] && [ "$(grep -c . q.out)" = 400 ] && ok "two runs at once on one cache: both complete" || not_ok "concurrent" "$ra $rb" "$(cat p.err q.err)"
[ "$(entries c.bin)" = 800 ] && ok "the cache merged both runs (800 entries)" || not_ok "merged" "$(entries c.bin)"
run "$DUPSCAN" -rq --cache=c.bin p q
[ "$rc" = 0 ] && [ -z "$err" ] && ok "and is valid" || not_ok "valid after concurrent" "$err"
# entries of files gone are dropped
rm p/f1 p/g1
"$DUPSCAN" -rq --cache=c.bin q > /dev/null
[ "$(entries c.bin)" = 798 ] && ok "entries of deleted files are pruned" || not_ok "prune" "$(entries c.bin)"

# the default place, and --cache-clear
run "$DUPSCAN" -rq --cache p
[ -s "$XDG_CACHE_HOME/dupscan/hashes" ] && ok "default cache under \$XDG_CACHE_HOME/dupscan" || not_ok "default" "$(ls -R "$XDG_CACHE_HOME")"
run "$DUPSCAN" --cache-clear
[ "$rc" = 0 ] && [ ! -e "$XDG_CACHE_HOME/dupscan/hashes" ] && ok "--cache-clear alone: removed, status 0" || not_ok "clear" "$rc" "$err"
run "$DUPSCAN" --cache-clear --cache=c.bin -rq p
[ "$rc" = 0 ] && [ "$(entries c.bin)" = 398 ] && ok "--cache-clear with paths: cleared, then this run's entries only" || not_ok "clear+scan" "$(entries c.bin)"
run "$DUPSCAN" -rq --cache= p
[ "$rc" = 2 ] && expect_err "--cache= with no name: usage error" "needs a file name"
run "$DUPSCAN" -rq --cache=/nonexistent/dir/c.bin p
[ "$rc" = 0 ] && [ "$(grep -c . <<< "$out")" = 398 ] && expect_err "an unwritable cache: reported, the scan still completes" "/nonexistent/dir/c.bin"
done_testing
