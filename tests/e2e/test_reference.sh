#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# --reference and --missing: a card of 2,000 files against a library of
# 20,000 (some of the card's files in the library, some copied within the
# card only, some nowhere), checked against a sha256 listing; -dN with a
# reference deletes exactly the card's files the library holds and changes
# nothing under it; a size no reference file has is never opened; bad input
# is refused before anything is read.
. "$(dirname "$0")/../fixtures/lib.sh"

python3 - <<'PY'
import os, random
r = random.Random(62)
os.makedirs("lib/a", exist_ok=True); os.makedirs("lib/b/c", exist_ok=True); os.makedirs("card/d", exist_ok=True)
lib = []
for i in range(20000):
    # sizes from a few hundred values: many files share a size, few a content
    data = r.randbytes(300 + r.randrange(400) * 7)
    p = f"lib/{'a' if i % 2 else 'b/c'}/l{i}"
    open(p, "wb").write(data); lib.append(data)
for i in range(800):     # in the library
    open(f"card/in{i}", "wb").write(lib[r.randrange(len(lib))])
for i in range(300):     # copied within the card only
    data = r.randbytes(300 + r.randrange(400) * 7)
    open(f"card/pair{i}a", "wb").write(data); open(f"card/d/pair{i}b", "wb").write(data)
for i in range(598):     # nowhere else
    open(f"card/d/solo{i}", "wb").write(r.randbytes(300 + r.randrange(400) * 7))
open("card/odd", "wb").write(r.randbytes(5)); open("card/odd2", "wb").write(b"x" * 5) # a size no library file has
PY
oracle() { python3 - <<'PY'
import hashlib, os
h = lambda p: hashlib.sha256(open(p, "rb").read()).hexdigest()
have = {h(os.path.join(d, f)) for d, _, fs in os.walk("lib") for f in fs}
miss = sorted(os.path.join(d, f) for d, _, fs in os.walk("card") for f in fs if h(os.path.join(d, f)) not in have)
print("\n".join(miss)); print(len(miss), sum(os.path.getsize(p) for p in miss))
PY
}
want=$(oracle)
want_list=$(printf '%s\n' "$want" | head -n -1)
want_n=$(printf '%s\n' "$want" | tail -1 | cut -d' ' -f1)
want_bytes=$(printf '%s\n' "$want" | tail -1 | cut -d' ' -f2)

run "$DUPSCAN" -r --reference=lib card --missing
[ "$rc" = 3 ] && [ "$(printf '%s\n' "$out" | sort)" = "$want_list" ] &&
  ok "--missing: the $want_n files a sha256 listing says lack a copy in the library, status 3" ||
  not_ok "--missing list" "rc=$rc" "$(diff <(printf '%s\n' "$out" | sort) <(printf '%s\n' "$want_list") | head -5)"
case "$err" in "dupscan: $want_n files ("*") of 2000 checked have no copy under lib") ok "--missing: the summary's count" ;; *) not_ok "summary" "$err" ;; esac
got=$("$DUPSCAN" -r --reference=lib card --missing -j 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["missing"]), sum(f["size"] for f in d["missing"]), d["references"])')
[ "$got" = "$want_n $want_bytes ['lib']" ] && ok "--missing -j: the files and their bytes" || not_ok "--missing json" "$got"
got=$("$DUPSCAN" -r --reference=lib card --missing --format=csv 2>/dev/null | python3 -c '
import csv, sys
rows = list(csv.reader(sys.stdin))
print(rows[0], len(rows) - 1, sum(int(r[1]) for r in rows[1:]))
print("\n".join(sorted(r[0] for r in rows[1:])))')
[ "$got" = "['path', 'size'] $want_n $want_bytes
$want_list" ] && ok "--missing --format=csv: path,size, the files and their bytes" || not_ok "--missing csv" "$(head -3 <<< "$got")"
[ "$(printf '%s\n' "$want_list" | grep -c pair)" = 600 ] && ok "copies of each other missing from the library: all listed" || not_ok "pairs"

# the sets: each has a library file, listed first
run "$DUPSCAN" -r --reference=lib card
printf '%s\n' "$out" | awk 'BEGIN{RS=""} {split($0, l, "\n"); if (l[1] !~ /^lib\//) bad++; n++} END{print n, bad+0}' > sets.txt
sets=$(cut -d' ' -f1 sets.txt)
[ "$(cut -d' ' -f2 sets.txt)" = 0 ] && [ "$sets" -ge 700 ] && ! printf '%s\n' "$out" | grep -q pair &&
  ok "--reference: $sets sets, each led by a library file, none without one" || not_ok "reference sets" "$(cat sets.txt)"

# a size no library file has: never opened; nor a library size no card file has
opened=$(strace -f -e trace=open,openat "$DUPSCAN" -r --reference=lib card --missing 2>&1 >/dev/null | grep -c 'card/odd')
[ "$opened" = 0 ] && ok "a size no reference file has: missing without being opened" || not_ok "card/odd opened $opened times"

# across hosts, through an OpenSSH server here: the same answers, either
# side the reference, and only what the question needs over the link
across() { # LABEL REF CARD: --missing equals the sha256 listing
  run "$DUPSCAN" -r "${X[@]}" --reference="$2" "$3" --missing
  local got; got=$(printf '%s\n' "$out" | sed "s#^$SSH_HOST:$PWD/##" | sort)
  [ "$rc" = 3 ] && [ "$got" = "$want_list" ] && case "$err" in *"$want_n files ("*") of 2000 checked have no copy under $2") true ;; *) false ;; esac &&
    ok "$1: --missing lists the same $want_n files" || not_ok "$1" "rc=$rc $err" "$(diff <(echo "$got") <(echo "$want_list") | head -5)"
}
if start_sshd; then
  trap 'stop_sshd; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
  X=(--rsh="$SSH_CMD" --remote-dupscan="$DUPSCAN")
  across "the library on another host" "$SSH_HOST:$PWD/lib" card
  across "the card on another host" lib "$SSH_HOST:$PWD/card"
  across "both on another host" "$SSH_HOST:$PWD/lib" "$SSH_HOST:$PWD/card"
  got=$("$DUPSCAN" -r "${X[@]}" --reference="$SSH_HOST:$PWD/lib" card --missing -j 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(len(d["missing"]), sum(f["size"] for f in d["missing"]))')
  [ "$got" = "$want_n $want_bytes" ] && ok "across hosts, -j: the files and their bytes" || not_ok "across json" "$got"
  # over the link: the library's sets and sizes, hashes of the files of a
  # card size, the bytes of the card's 800 copies; not the library's 34 MB
  run "$DUPSCAN" -rm "${X[@]}" --reference="$SSH_HOST:$PWD/lib" card
  read -r got_in _ <<< "$(sed -n 2p <<< "$out")"
  lib_bytes=$(du -sb --apparent-size lib | cut -f1) in_bytes=$(cat card/in* | wc -c)
  [ "$rc" = 0 ] && [ "${got_in:-0}" -gt "$in_bytes" ] && [ "$got_in" -lt $((in_bytes + 64 * 20000)) ] &&
    ok "across hosts: $got_in bytes received (the copies' $in_bytes, a library of $lib_bytes)" || not_ok "link bytes" "$out" "$err"
  # the library's host opens only files of a size the card has: told the
  # card's sizes once this host's walk is done (as a local reference's sizes
  # without a card file are never read)
  # (LeakSanitizer cannot run under strace's ptrace: off for this server only)
  printf '#!/bin/sh\nexport ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"\nstrace -f -e trace=openat -o "%s/srv.trace" "%s" "$@"\necho $? > "%s/srv.status"\n' "$PWD" "$DUPSCAN" "$PWD" > srv &&
    chmod +x srv
  run "$DUPSCAN" -r --rsh="$SSH_CMD" --remote-dupscan="$PWD/srv" --reference="$SSH_HOST:$PWD/lib" card --missing
  got=$(python3 - <<'PY'
import os, re
card = {os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk("card") for f in fs}
# the library's names (l0, l1, ...) are its own, opened by name from their directory
lib = {f: os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk("lib") for f in fs}
want = bad = 0
for line in open("srv.trace"):
    m = re.search(r'openat\([^,]+, "(?:[^"]*/)?(l\d+)"', line)
    if m and "O_DIRECTORY" not in line:
        if lib[m.group(1)] in card: want += 1
        else: bad += 1
print(want > 0, bad)
PY
)
  [ "$rc" = 3 ] && [ "$(printf '%s\n' "$out" | sort)" = "$want_list" ] && [ "$got" = "True 0" ] &&
    ok "the library's host opens no file of a size the card lacks" || not_ok "reference host reads" "rc=$rc $got" "$err"
  # status 3 is an answer: the server was waited for, not killed (it ended with 0)
  [ "$(cat srv.status 2>/dev/null)" = 0 ] && ok "status 3: the server ends as it should" || not_ok "server status" "$(cat srv.status 2>&1)"
  # the card's host, told the library's sizes, opens no file of a size the
  # library lacks (card/odd, card/odd2: a group of two there), and still
  # lists them missing
  run "$DUPSCAN" -r --rsh="$SSH_CMD" --remote-dupscan="$PWD/srv" --reference=lib "$SSH_HOST:$PWD/card" --missing
  got=$(printf '%s\n' "$out" | sed "s#^$SSH_HOST:$PWD/##" | sort)
  odd=$(grep -cE 'openat\([^,]+, "([^"]*/)?odd2?"' srv.trace) ins=$(grep -cE 'openat\([^,]+, "([^"]*/)?in[0-9]+"' srv.trace)
  [ "$rc" = 3 ] && [ "$got" = "$want_list" ] && [ "$odd" = 0 ] && [ "$ins" -gt 0 ] &&
    ok "the card's host opens no file of a size the library lacks, and lists it missing" ||
    not_ok "card host reads" "rc=$rc odd=$odd ins=$ins" "$(diff <(echo "$got") <(echo "$want_list") | head -5)"
  cp -a card card2
  run "$DUPSCAN" -rdN "${X[@]}" --reference="$SSH_HOST:$PWD/lib" card2
  left=$(cd card2 && find . -type f | sed 's#^\./#card/#' | sort)
  [ "$rc" = 0 ] && [ "$left" = "$want_list" ] && ok "-dN --reference=HOST:PATH: exactly the card's files the library holds deleted" ||
    not_ok "-dN across" "rc=$rc $err" "$(diff <(echo "$left") <(echo "$want_list") | head -5)"
  rm -rf card2
  # a reference not there on its host: named, nothing called missing, status 1
  run "$DUPSCAN" -r "${X[@]}" --reference="$SSH_HOST:$PWD/nope" card --missing
  [ "$rc" = 1 ] && [ -z "$out" ] && case "$err" in *"$SSH_HOST:$PWD/nope: $E_NOENT"*"--missing: A reference path could not be scanned"*) true ;; *) false ;; esac &&
    ok "a reference not there on its host: named, no file called missing, status 1" || not_ok "remote reference gone" "rc=$rc" "$out" "$err"
else
  ok "# SKIP $SSHD_WHY"
fi

# -dN: the card's files the library holds go, nothing under the library changes
( cd lib && find . -type f -print0 | sort -z | xargs -0 sha256sum ) > lib.before
run "$DUPSCAN" -rdN --reference=lib card
( cd lib && find . -type f -print0 | sort -z | xargs -0 sha256sum ) > lib.after
left=$(cd card && find . -type f | sed 's#^\./#card/#' | sort)
[ "$rc" = 0 ] && cmp -s lib.before lib.after && [ "$left" = "$want_list" ] &&
  ok "-dN --reference: exactly the card's files the library holds deleted, the library unchanged" ||
  not_ok "-dN reference" "rc=$rc $err" "$(diff <(echo "$left") <(echo "$want_list") | head -5)"
run "$DUPSCAN" -r --reference=lib card --missing
[ "$rc" = 3 ] && [ "$(printf '%s\n' "$out" | sort)" = "$want_list" ] && ok "after -dN: the same files missing" || not_ok "after -dN"
mkdir spare && cp lib/a/l1 spare/
run "$DUPSCAN" -r --reference=lib spare --missing
[ "$rc" = 0 ] && [ -z "$out" ] && ok "nothing missing: status 0" || not_ok "nothing missing" "rc=$rc $out"

# the library bind-mounted inside the card: the card's view of it is the
# library (the same files reached twice), never listed missing nor deleted
mkdir -p bl/lib bl/card/mirror && head -c 5000 /dev/urandom > bl/lib/x && cp bl/lib/x bl/card/x && head -c 6000 /dev/urandom > bl/lib/y
if mount --bind bl/lib bl/card/mirror 2>/dev/null; then
  run "$DUPSCAN" -r --reference=bl/lib bl/card --missing; m_rc=$rc; m_out=$out
  run "$DUPSCAN" -rdN --reference=bl/lib bl/card
  left=$(cd bl && find lib card -type f | sort | tr '\n' ' ')
  umount bl/card/mirror
  [ "$m_rc" = 0 ] && [ -z "$m_out" ] && [ "$rc" = 0 ] && [ "$left" = "card/mirror/x card/mirror/y lib/x lib/y " ] &&
    ok "a bind mount of the library in the card: nothing missing, only card/x deleted" || not_ok "bind mount" "$m_rc $m_out / $rc $err / $left"
else
  ok "# SKIP no bind mount here"
fi

# bad input: status 2, a message, nothing read
expect_usage() { # LABEL WORD ARGS...
  local label=$1 word=$2; shift 2
  run "$DUPSCAN" "$@"
  [ "$rc" = 2 ] && [ -z "$out" ] && case "$err" in *"$word"*) true ;; *) false ;; esac && ok "$label" || not_ok "$label" "rc=$rc" "$err"
}
expect_usage "--missing without --reference" "--missing needs --reference" -r --missing card
expect_usage "a reference that does not exist" "--reference 'nope'" -r --reference=nope card
expect_usage "a reference that is a file" "not a directory" -r --reference=lib/a/l1 card
expect_usage "a reference that is the only path" "the only path" -r --reference=lib lib
expect_usage "a reference and no path" "needs other paths" -r --reference=lib
expect_usage "--missing with an action" "refused with an action" -r --reference=lib --missing -dN card
expect_usage "-u with a reference" "--missing lists the files with no copy" -ru --reference=lib card
done_testing
