#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HOST:PATH through a real OpenSSH server on 127.0.0.1, on a free port, with
# host and user keys made here (skipped where sshd cannot start): the sets
# equal a local scan's, -dN keeping the remote copy deletes local ones only.
. "$(dirname "$0")/../fixtures/lib.sh"
start_sshd || { echo "ok 1 # SKIP $SSHD_WHY"; echo "1..1"; exit 0; }
trap 'stop_sshd; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
RSH=$SSH_CMD port=$SSHD_PORT K=$SSH_KEYS
ok "sshd on 127.0.0.1:$port with keys made here"
H=$SSH_HOST

mkdir -p "$T/A/d" "$T/B/e"
head -c 1000000 /dev/urandom > "$T/A/big"; cp "$T/A/big" "$T/B/e/big2"; cp "$T/A/big" "$T/A/d/big3"
head -c 3000 /dev/urandom > "$T/B/r"; cp "$T/B/r" "$T/B/e/r2"
echo x > "$T/A/x"; echo x > "$T/B/x2"; echo y > "$T/A/y"; echo yy > "$T/B/yy"
norm() { python3 -c '
import sys
sets = [s for s in sys.stdin.read().split("\n\n") if s.strip()]
print("\n".join(sorted(" ".join(sorted(p.split(":", 1)[-1] for p in s.split("\n") if p)) for s in sets)))'; }
run "$DUPSCAN" -rq "$T/A" "$T/B"; want=$(echo "$out" | norm)
run "$DUPSCAN" -rq --rsh="$RSH" --remote-dupscan="$DUPSCAN" "$T/A" "$H:$T/B"; got=$(echo "$out" | norm)
[ "$rc" = 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] && ok "sets over ssh equal a local scan of A B" ||
  not_ok "sets over ssh" "rc $rc" "$got" "--- want" "$want" "$err"
grep -q "^$H:$T/B/e/big2\$" <<< "$out" && ok "remote files print as USER@HOST:PATH" || not_ok "USER@HOST:PATH" "$out"
export DUPSCAN_RSH="$RSH"
run "$DUPSCAN" -rq --remote-dupscan="$DUPSCAN" -dN --protect="$H:$T/B" "$T/A" "$H:$T/B"
[ "$rc" = 0 ] && [ ! -e "$T/A/big" ] && [ ! -e "$T/A/d/big3" ] && [ ! -e "$T/A/x" ] && [ -e "$T/A/y" ] &&
  [ -e "$T/B/e/big2" ] && [ -e "$T/B/r" ] && [ -e "$T/B/e/r2" ] && [ -e "$T/B/x2" ] &&
  ok "DUPSCAN_RSH; -dN keeping the remote copy deletes the local ones only" || not_ok "-dN over ssh" "rc $rc" "$out" "$err"
# at scale: 4,000 sets, every kept copy on the other side of the ssh connection
# (the server once refused all kept files past its 64th as "changed")
rm -rf "$T/A" "$T/B"
python3 - "$T" "${REMOTE_SETS:-4000}" <<'PY'
import os, sys
t, n = sys.argv[1], int(sys.argv[2])
for s in range(n):
    for side, d in (("A", s % 40), ("B", s % 37)):
        os.makedirs(f"{t}/{side}/d{d}", exist_ok=True)
        with open(f"{t}/{side}/d{d}/f{s}", "wb") as f:
            f.write(f"set {s} ".encode() * (1 + s % 30))
PY
J=$( [ -d /dev/shm ] && [ -w /dev/shm ] && echo /dev/shm || echo "$T")/dupscan-ssh-$$.j
run "$DUPSCAN" -rqdN --remote-dupscan="$DUPSCAN" --journal="$J" --protect="$H:$T/B" "$T/A" "$H:$T/B"
rm -f "$J"
[ "$rc" = 0 ] && [ "$(find "$T/A" -type f | wc -l)" = 0 ] && [ "$(find "$T/B" -type f | wc -l)" = "${REMOTE_SETS:-4000}" ] &&
  ok "over ssh, -dN keeping the remote copies of ${REMOTE_SETS:-4000} sets: every local copy deleted, none refused" ||
  not_ok "-dN at scale over ssh" "rc $rc, $(find "$T/A" -type f | wc -l) left" "$(grep -m3 '\[!\]' <<< "$out")" "$err"
# a host that cannot be reached: ssh's own message, then the run fails, nothing changed
echo z > "$T/A/z"; echo z > "$T/A/z2"
run "$DUPSCAN" -rq --rsh="ssh -p 1 -o BatchMode=yes -o ConnectTimeout=5" --remote-dupscan="$DUPSCAN" -dN "$T/A" "127.0.0.1:$T/B"
[ "$rc" = 1 ] && [ -e "$T/A/z" ] && [ -e "$T/A/z2" ] && grep -q "127.0.0.1:$T/B: " <<< "$err" &&
  ok "an unreachable host fails the run before any action" || not_ok "unreachable" "rc $rc" "$err"
done_testing
