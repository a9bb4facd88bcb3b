#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# HOST:PATH through a real OpenSSH server on 127.0.0.1, on a free port, with
# host and user keys made here (skipped where sshd cannot start): the sets
# equal a local scan's, -dN keeping the remote copy deletes local ones only.
. "$(dirname "$0")/lib.sh"
SSHD=$(command -v sshd || echo /usr/sbin/sshd)
if [ ! -x "$SSHD" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
  echo "ok 1 # SKIP no OpenSSH server here (openssh-server)"; echo "1..1"; exit 0
fi
K="$T/.ssh"; mkdir -p "$K" && chmod 700 "$K"
ssh-keygen -q -t ed25519 -N '' -f "$K/host" && ssh-keygen -q -t ed25519 -N '' -f "$K/user" && cp "$K/user.pub" "$K/authorized_keys" && chmod 600 "$K/authorized_keys"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$K/sshd_config" <<CFG
Port $port
ListenAddress 127.0.0.1
HostKey $K/host
PidFile $K/sshd.pid
AuthorizedKeysFile $K/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
CFG
mkdir -p /run/sshd 2>/dev/null
if ! "$SSHD" -f "$K/sshd_config" -E "$K/sshd.log" 2>"$K/start.err"; then
  echo "ok 1 # SKIP sshd would not start: $(head -c 200 "$K/start.err")"; echo "1..1"; exit 0
fi
trap '[ -f "$K/sshd.pid" ] && kill "$(cat "$K/sshd.pid")"; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
RSH="ssh -p $port -i $K/user -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=$K/known -o LogLevel=ERROR"
up=
for _ in $(seq 50); do $RSH "$(id -un)@127.0.0.1" true 2>/dev/null && { up=1; break; }; sleep 0.1; done
if [ -z "$up" ]; then
  echo "ok 1 # SKIP cannot log in through the test's sshd: $(tail -c 300 "$K/sshd.log")"; echo "1..1"; exit 0
fi
ok "sshd on 127.0.0.1:$port with keys made here"
H="$(id -un)@127.0.0.1"

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
