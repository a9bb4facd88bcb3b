#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Fault injection (an LD_PRELOAD shim, tests/fault/fault.c): a failing open,
# read, stat, readdir, link, symlink, rename or unlink on one file. The scan
# completes, the file is reported and left out, nothing is reported on partial
# data, the status is 1, and actions lose nothing.
. "$(dirname "$0")/../fixtures/lib.sh"
FAULT=${FAULT_LIB:?}

tree() {
  rm -rf t; mkdir -p t/d t/victimdir t/e
  head -c 300000 /dev/urandom > t/d/a; cp t/d/a t/d/b; cp t/d/a t/victimdir/victim
  head -c 9000 /dev/urandom > t/e/c; cp t/e/c t/e/d
}
digests() { find "$1" -type f -exec sha256sum {} + | awk '{print $1}' | sort -u; }
scan_fault() { # SPEC STATUS EXPECTED-SETS [OPTION]: the scan under one fault
  ${TREE:-tree}
  run env LD_PRELOAD="$FAULT" DUPSCAN_FAULT="$1" "$DUPSCAN" -rq ${4:-} t
  if [ "$rc" = "$2" ] && [ "$out" = "$3" ]; then ok "scan with $1: status $2, sets as expected"
  else not_ok "scan with $1" "status $rc (want $2)" "$out" "--- stderr" "$err"; fi
  if [ "$2" = 1 ]; then
    case "$err" in *victim*) ok "scan with $1: the failing path is named" ;; *) not_ok "scan with $1: not named" "$err" ;; esac
  fi
}
pair_only=$(printf 't/d/a\nt/d/b\n\nt/e/c\nt/e/d')
all=$(printf 't/d/a\nt/d/b\nt/victimdir/victim\n\nt/e/c\nt/e/d')
scan_fault "open64:victim:EACCES" 1 "$pair_only"
scan_fault "open64:victim:EIO" 1 "$pair_only"
scan_fault "open64:victim:ENOENT" 1 "$pair_only"   # vanished between walk and read
scan_fault "fstatat64:victim:ENOENT" 1 "$pair_only"
scan_fault "pread64:victim:EIO" 1 "$pair_only"
scan_fault "pread64:victim:ZERO" 1 "$pair_only"
scan_fault "pread64:victim:SHORT" 0 "$all"
scan_fault "pread64:victim:EINTR" 0 "$all"
scan_fault "fstat64:victim:EIO" 1 "$pair_only"
scan_fault "fstatat64:victim:EIO" 1 "$pair_only"
scan_fault "open64:victimdir:EACCES" 1 "$pair_only"   # the directory itself
scan_fault "readdir64:victimdir:EIO" 1 "$pair_only"
# --io=hdd: a few files of one size (a, b, victim) are read whole by the
# sweep, nothing before it; more than four alike are read a head first, then
# in rounds, then whole by the sweep (reads 1 to 4 of the victim)
scan_fault "pread64:victim:EIO" 1 "$pair_only" --io=hdd
scan_fault "pread64:victim:ZERO" 1 "$pair_only" --io=hdd
scan_fault "pread64:victim:SHORT" 0 "$all" --io=hdd
scan_fault "pread64:victim:EINTR" 0 "$all" --io=hdd
scan_fault "fstat64:victim:EIO@2" 1 "$pair_only" --io=hdd
five() {
  rm -rf t; mkdir -p t/d t/victimdir
  head -c 300000 /dev/urandom > t/d/a; for i in 1 2 3 4; do cp t/d/a "t/d/a$i"; done; cp t/d/a t/victimdir/victim
}
five_only=$(printf 't/d/a\nt/d/a1\nt/d/a2\nt/d/a3\nt/d/a4')
for n in 1 2 3 4; do TREE=five scan_fault "pread64:victim:EIO@$n" 1 "$five_only" --io=hdd; done
TREE=five scan_fault "pread64:victim:EIO@5" 0 "$(printf '%s\nt/victimdir/victim' "$five_only")" --io=hdd

act_fault() { # SPEC ACTION: the action fails on the victim only; nothing is lost
  tree
  local want; want=$(digests t)
  run env LD_PRELOAD="$FAULT" DUPSCAN_FAULT="$1" "$DUPSCAN" -rq $2 t
  local got; got=$(digests t)
  [ "$rc" = 1 ] && ok "$2 with $1: status 1" || not_ok "$2 with $1: status $rc" "$out" "$err"
  [ "$got" = "$want" ] && ok "$2 with $1: every content present" || not_ok "$2 with $1: content lost"
  [ -f t/victimdir/victim ] && [ ! -L t/victimdir/victim ] && [ "$(stat -c %h t/victimdir/victim)" = 1 ] \
    && ok "$2 with $1: the victim untouched" || not_ok "$2 with $1: victim changed" "$(ls -l t/victimdir)"
  [ -z "$(find t -name '.dupscan-tmp-*')" ] && ok "$2 with $1: no temporary name left" || not_ok "$2 with $1: temporary left"
}
act_fault "linkat:victimdir:ENOSPC" -L
act_fault "rename:victim:EIO" -L
act_fault "symlink:victimdir:ENOSPC" -l
act_fault "rename:victim:EACCES" -l
act_fault "unlink:victim:EIO" -dN

# the file a group larger than the open-file budget is compared against fails
# on its later open (each batch reopens it): it leaves, and the others are
# matched as without it (once a true duplicate was listed as unique, or a set
# split in two). Which file is compared against depends on the read order, so
# every file takes a turn; only that one is opened a fourth time.
for count in 9 10; do
  rm -rf g; mkdir g; head -c 300000 /dev/urandom > g/f00
  for i in $(seq 1 $((count - 1))); do cp g/f00 "g/f$(printf %02d "$i")"; done
  bad=0; hit=0
  for f in g/f*; do
    out=$(ulimit -n 72; env LD_PRELOAD="$FAULT" DUPSCAN_FAULT="open64:$f:EIO@4" "$DUPSCAN" -r --threads=2 g 2>err.log)
    uniq=$(ulimit -n 72; env LD_PRELOAD="$FAULT" DUPSCAN_FAULT="open64:$f:EIO@4" "$DUPSCAN" -ru --threads=2 g 2>/dev/null)
    if grep -q "$f: $E_IO" err.log; then
      hit=$((hit + 1)); want=$(ls -d g/f* | grep -vx "$f")
    else
      want=$(ls -d g/f*)
    fi
    [ "$out" = "$want" ] && [ -z "$uniq" ] || { bad=$((bad + 1)); echo "# $f: $(echo $out) / unique: $uniq"; }
  done
  [ "$bad" = 0 ] && [ "$hit" -ge 1 ] && ok "$count equal files, 8 open at most, the reference failing: one set of the rest, none unique ($hit failed)" \
    || not_ok "$count files, failing reference: $bad wrong results, $hit failures hit"
done
done_testing
