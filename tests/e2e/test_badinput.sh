#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Bad input: each case named in the issue, with the message, the status and the
# sets that must still come out.
. "$(dirname "$0")/../fixtures/lib.sh"

mk d/a pair; mk d/b pair

expect "nonexistent path: others still scanned, exit 1" 1 "$(printf 'd/a\nd/b\n')" "$DUPSCAN" -r nope d
expect_err "nonexistent path is named" "^dupscan: nope: $E_NOENT$"

# unreadable files and directories: as root permissions do not stop reads, so
# the scan then runs as nobody
as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; else "$@"; fi; }
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=65534 --regid=65534 --clear-groups true 2>/dev/null; then
  echo "Bail out! running as root without the right to switch users: cannot test unreadable files"; exit 1
fi
mk u/ok1 pair3; mk u/ok2 pair3; mk u/noread pair3; mk u/locked/x pair3
chmod 000 u/noread u/locked
[ "$(id -u)" = 0 ] && chown -R 65534:65534 u
expect "unreadable file and dir: pair still found, exit 1" 1 "$(printf 'u/ok1\nu/ok2\n')" as_user "$DUPSCAN" -r u
expect_err "unreadable file named" "^dupscan: u/noread: $E_ACCES$"
expect_err "unreadable directory named" "^dupscan: u/locked: $E_ACCES$"
chmod 755 u/locked; chmod 644 u/noread

# FIFOs, sockets and devices in the tree are never opened (a FIFO would hang)
mk f/a same; mk f/b same; mkfifo f/fifo
python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' f/sock
# a device node where one may be made (root outside a restricted container), else a symlink to one
mknod f/null c 1 3 2>/dev/null || ln -s /dev/null f/null
expect "special files skipped, no hang" 0 "$(printf 'f/a\nf/b\n')" timeout 20 "$DUPSCAN" -rs f
expect "a FIFO argument: named, not opened, exit 1" 1 "$(printf 'f/a\nf/b\n')" timeout 20 "$DUPSCAN" f/fifo f/a f/b
expect_err "FIFO argument message" "^dupscan: f/fifo: Not a regular file or directory$"

# symlink loops, the same directory twice, nested arguments
mk loop/x lp; mk loop/sub/y lp; ln -s .. loop/sub/up; ln -s self loop/self
expect "symlink loop with -s" 0 "$(printf 'loop/sub/y\nloop/x\n')" timeout 20 "$DUPSCAN" -rs loop
expect "same directory twice" 0 "$(printf 'loop/sub/y\nloop/x\n')" "$DUPSCAN" -r loop loop
expect "directory nested in another argument" 0 "$(printf 'loop/sub/y\nloop/x\n')" "$DUPSCAN" -r loop/sub loop
expect "same file twice" 0 "" "$DUPSCAN" loop/x loop/x ./loop/x
expect "same file twice with -H is still one file" 0 "" "$DUPSCAN" -H loop/x loop/x ./loop/x

# odd names are printed byte for byte
mkdir odd
printf 'z' > "odd/with space"; printf 'z' > "odd/new
line"; printf 'z' > "odd/-dash"; printf 'z' > 'odd/`tick`'; printf 'z' > "$(printf 'odd/bad\377\376name')"
# (in jdupes' name order: symbols below '.' last, letters without case)
expect "odd names byte-exact" 0 "$(printf 'odd/bad\377\376name\0odd/new\nline\0odd/with space\0odd/`tick`\0odd/-dash\0\0' | od -An -c)" sh -c '"$1" -0 odd | od -An -c' sh "$DUPSCAN"
expect "a name starting with a dash after --" 0 "$(printf -- 'with space\n-dash\n')" sh -c 'cd odd && "$1" -- -dash "with space"' sh "$DUPSCAN"

# 300 levels of nesting and 20,000 entries in one directory
p=deep; for i in $(seq 300); do p="$p/d"; done; mkdir -p "$p"; printf 'deep' > "$p/bottom"; printf 'deep' > deep/top
expect "300-level nesting" 0 "$(printf '%s/bottom\ndeep/top\n' "$p")" "$DUPSCAN" -r deep
mkdir wide; (cd wide && seq -f 'f%05g' 0 19999 | while read -r f; do printf '%s' "${f#f0}" > "$f"; done); printf '9999' > wide/g
expect "20,000 entries in one directory" 0 "$(printf 'wide/f09999\nwide/g\n')" "$DUPSCAN" -r wide

# usage errors: message naming the option, status 2, nothing scanned
expect "unknown short option" 2 "" "$DUPSCAN" -Y d
expect_err "unknown short option named" "unknown option '-Y'"
expect "unknown long option" 2 "" "$DUPSCAN" --frobnicate d
expect_err "unknown long option named" "unknown option '--frobnicate'"
expect "unknown long option with a value" 2 "" "$DUPSCAN" --frob=3 d
expect_err "unknown long option with a value named" "unknown option '--frob'"
expect "bad -o value" 2 "" "$DUPSCAN" -o size d
expect_err "bad -o named" "invalid value 'size' for -o/--order"
expect "bad -C value" 2 "" "$DUPSCAN" -C 100 d
expect_err "bad -C named" "invalid chunk size '100'"
expect "-C without value" 2 "" "$DUPSCAN" d -C
expect_err "-C needs a value" "option '-C' needs a value"
expect "--order without value" 2 "" "$DUPSCAN" d --order
expect_err "--order needs a value" "option '--order' needs a value"
expect "-T once" 2 "" "$DUPSCAN" -T d
expect_err "-T once explained" "must be given twice"
expect "no paths" 2 "" "$DUPSCAN" -r
expect_err "no paths explained" "no files or directories given"
done_testing
