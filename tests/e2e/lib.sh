# SPDX-License-Identifier: MIT
# Helpers for the CLI tests: TAP output, a fresh tree under mktemp -d, and an
# exact comparison of stdout, stderr and exit status.
set -u
DUPSCAN=${DUPSCAN:?set DUPSCAN to the dupscan binary}
# the tree in memory where scripts/test gives a tmpfs (DUPSCAN_TEST_TMP): on
# a disk mounted with discard, as this VM's, a test's thousands of files cost
# seconds of system time to write and remove (the plain leg's tests took 234
# s in all there against 284 on /tmp); a test whose figures are the disk's
# sets ON_DISK=1 before it sources this file
base=${TMPDIR:-/tmp}
[ -z "${ON_DISK:-}" ] && [ -n "${DUPSCAN_TEST_TMP:-}" ] && [ -d "$DUPSCAN_TEST_TMP" ] && base=$DUPSCAN_TEST_TMP
T=$(mktemp -d "$base/dupscan-cli-XXXXXX")
chmod 755 "$T"
trap 'chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
cd "$T" || exit 1
# action journals go to the test's own place (writable by the nobody user too)
export XDG_STATE_HOME="$T/.state"
mkdir -p "$XDG_STATE_HOME" && chmod 1777 "$XDG_STATE_HOME"
tap_n=0
failed=0

# Tests that run the program as another user (nobody: setpriv --reuid=65534)
# need it where that user can reach it: a checkout under a folder only its
# owner may enter (root's home is 0700) is not. Then the program and its
# library are copied into the test's own folder, and run from there.
if [ "$(id -u)" = 0 ] && [ -n "${DUPSCAN_LIB:-}" ] && command -v setpriv >/dev/null &&
   ! setpriv --reuid=65534 --regid=65534 --clear-groups test -x "$DUPSCAN" 2>/dev/null; then
  # (laid out as in the build: the program finds its library by its run
  # path, $ORIGIN/../lib, wherever it runs, over ssh too, with no wrapper
  # that an LD_PRELOAD of the tests' would reach)
  mkdir -p "$T/.bin/cli" "$T/.bin/lib" && cp "$DUPSCAN" "$T/.bin/cli/dupscan" &&
    cp "$DUPSCAN_LIB" "$T/.bin/lib/libdupscan.so.0" &&
    chmod 755 "$T/.bin" "$T/.bin/cli" "$T/.bin/lib" "$T/.bin/cli/dupscan" && chmod 644 "$T/.bin/lib/libdupscan.so.0" &&
    DUPSCAN=$T/.bin/cli/dupscan
fi

# python3 itself, not a version manager's shim in front of it: pyenv's runs
# a handful of bash processes a call (0.14 s against 0.013 s), and the tests
# call python3 hundreds of times a leg. scripts/test finds it once for the run.
if [ -z "${DUPSCAN_TEST_PYTHON:-}" ]; then
  DUPSCAN_TEST_PYTHON=$(python3 -c 'import sys; print(sys.executable)')
  export DUPSCAN_TEST_PYTHON
fi
if [ "$(command -v python3)" != "$DUPSCAN_TEST_PYTHON" ]; then
  mkdir -p "$T.python" && ln -sf "$DUPSCAN_TEST_PYTHON" "$T.python/python3" && PATH="$T.python:$PATH"
fi
# the C library's texts for the errors tests expect (glibc and musl word some differently)
errtext() { python3 -c 'import errno, os, sys; print("\n".join(os.strerror(getattr(errno, e)) for e in sys.argv[1:]))' "$@"; }
# (one python3 for the three: each test sources this, in every leg)
{ read -r E_NOENT; read -r E_ACCES; read -r E_IO; } < <(errtext ENOENT EACCES EIO)
ok() { tap_n=$((tap_n + 1)); echo "ok $tap_n - $1"; }
not_ok() {
  tap_n=$((tap_n + 1)); failed=$((failed + 1)); echo "not ok $tap_n - $1"
  shift
  printf '%s\n' "$@" | sed 's/^/# /'
}
done_testing() { echo "1..$tap_n"; [ "$failed" -eq 0 ]; exit $?; }

# run NAME: runs the rest of the line, capturing stdout in $out, stderr in $err, status in $rc
# (trailing newlines are dropped, as $(...) does for the expected text; tests of
# exact bytes, NULs included, pipe through od instead)
run() { out=$("$@" 2>"$T/.err"); rc=$?; err=$(<"$T/.err"); }

# expect NAME STATUS EXPECTED_STDOUT CMD...: exact stdout (trailing newlines aside) and status
expect() {
  local name=$1 status=$2 want=$3; shift 3
  run "$@"
  if [ "$rc" = "$status" ] && [ "$out" = "$want" ]; then ok "$name"
  else not_ok "$name" "command: $*" "status $rc (want $status)" "--- got" "$out" "--- want" "$want" "--- stderr" "$err"; fi
}

# expect_err NAME PATTERN: the last run's stderr matches the extended regex
expect_err() {
  if printf '%s' "$err" | grep -Eq -- "$2"; then ok "$1"; else not_ok "$1" "stderr: $err" "want /$2/"; fi
}

# flip_byte FILE OFFSET: invert every bit of the byte at OFFSET, so the file
# always changes (writing a fixed byte leaves it as it was when that byte was there)
flip_byte() {
  local b
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  [ -n "$b" ] || { echo "# flip_byte: $1 has no byte $2" >&2; return 1; }
  printf "\\$(printf '%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# mk FILE CONTENT: create a file (and its parents) with exact content
mk() { mkdir -p "$(dirname "$1")"; printf '%s' "$2" > "$1"; }

# wait_for FILE TEXT: until FILE holds TEXT (at most 60 s): a program is at a known point
wait_for() {
  local i
  for i in $(seq 600); do grep -qF -- "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done
  echo "# timed out waiting for '$2' in $1" >&2; return 1
}

# snapshot DIR: one line per path under DIR: type, mode, mtime, content digest,
# symlink target, and which inode group it belongs to (the tree's hard links);
# two snapshots are equal when paths, contents, metadata and link structure are
snapshot() {
  python3 - "$1" <<'PY'
import hashlib, os, stat, sys
root = sys.argv[1]
groups, out = {}, []
for d, dirs, files in os.walk(root):
    dirs.sort()
    for n in sorted(files) + [x + "/" for x in dirs]:
        p = os.path.join(d, n.rstrip("/")); st = os.lstat(p); rel = os.path.relpath(p, root)
        if stat.S_ISDIR(st.st_mode):
            out.append(f"{rel!r}/\tdir {oct(st.st_mode & 0o7777)}")
        elif stat.S_ISLNK(st.st_mode):
            out.append(f"{rel!r}\tsymlink -> {os.readlink(p)!r}")
        else:
            g = groups.setdefault((st.st_dev, st.st_ino), len(groups))
            digest = hashlib.sha256(open(p, 'rb').read()).hexdigest()[:12]
            out.append(f"{rel!r}\tfile inode#{g} {oct(st.st_mode & 0o7777)} {st.st_mtime_ns} {digest}")
print("\n".join(sorted(out)))
PY
}

# peak: the peak RSS (KiB) of a run of CMD, its stdout to FILE (-1000 - status
# when it failed)
# bytes CMD...: the bytes CMD read (rchar: a reaped child's count joins its parent's)
bytes() {
  python3 -c '
import subprocess, sys
def rchar():
    text = open("/proc/self/io").read()
    return int(text.split("rchar:")[1].split()[0]), len(text)
# (reading /proc/self/io counts its own text, whose length moves with the
# digits of its numbers: taken out, or two equal runs differ by a few bytes)
a, own = rchar()
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(rchar()[0] - a - own)' "$@"
}

peak() { # FILE CMD...
  python3 - "$@" <<'PY'
import resource, subprocess, sys
with open(sys.argv[1], "wb") as out:
    rc = subprocess.call(sys.argv[2:], stdout=out)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss if rc == 0 else -rc - 1000)
PY
}

# skip_under_sanitizer: a peak-RSS test means nothing under a sanitizer (its
# shadow memory is most of the RSS): say so and stop
skip_under_sanitizer() {
  if [ -n "${DUPSCAN_SANITIZE:-}" ] && [ "$DUPSCAN_SANITIZE" != none ]; then
    echo "ok 1 # SKIP under ${DUPSCAN_SANITIZE}: its shadow memory is most of the RSS"
    echo "1..1"
    exit 0
  fi
}

# work_in_shm NAME: work in a directory on tmpfs (/dev/shm) where there is
# one, journals too: hundreds of thousands of files written to this VM's
# discard-mounted disk after a deletion take minutes; W is the directory
work_in_shm() {
  if [ -d /dev/shm ] && [ -w /dev/shm ] && W=$(mktemp -d "/dev/shm/dupscan-$1-XXXXXX"); then
    trap 'rm -rf "$W"; chmod -R u+rwx "$T" 2>/dev/null; rm -rf "$T" "$T.python"' EXIT
    cd "$W" || exit 1
    export XDG_STATE_HOME="$W/.state"
    mkdir -p "$XDG_STATE_HOME"
  fi
}

# start_sshd: an OpenSSH server on 127.0.0.1, on a free port, with host and
# user keys made here; the caller's EXIT trap calls stop_sshd. Sets SSH_CMD
# (ssh with the options that reach it), SSH_HOST (user@127.0.0.1),
# SSHD_PORT and SSH_KEYS; @return 1, with SSHD_WHY, where it cannot start
start_sshd() {
  local sshd k=$T/.ssh
  sshd=$(command -v sshd || echo /usr/sbin/sshd)
  if [ ! -x "$sshd" ] || ! command -v ssh >/dev/null || ! command -v ssh-keygen >/dev/null; then
    SSHD_WHY="no OpenSSH server here (openssh-server)"; return 1
  fi
  mkdir -p "$k" && chmod 700 "$k"
  ssh-keygen -q -t ed25519 -N '' -f "$k/host" && ssh-keygen -q -t ed25519 -N '' -f "$k/user" &&
    cp "$k/user.pub" "$k/authorized_keys" && chmod 600 "$k/authorized_keys"
  SSHD_PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat > "$k/sshd_config" <<CFG
Port $SSHD_PORT
ListenAddress 127.0.0.1
HostKey $k/host
PidFile $k/sshd.pid
AuthorizedKeysFile $k/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
CFG
  mkdir -p /run/sshd 2>/dev/null
  if ! "$sshd" -f "$k/sshd_config" -E "$k/sshd.log" 2>"$k/start.err"; then
    SSHD_WHY="sshd would not start: $(head -c 200 "$k/start.err")"; return 1
  fi
  SSH_KEYS=$k
  SSH_CMD="ssh -p $SSHD_PORT -i $k/user -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=$k/known -o LogLevel=ERROR"
  SSH_HOST="$(id -un)@127.0.0.1"
  local _
  for _ in $(seq 50); do $SSH_CMD "$SSH_HOST" true 2>/dev/null && return 0; sleep 0.1; done
  SSHD_WHY="cannot log in through the test's sshd: $(tail -c 300 "$k/sshd.log")"; return 1
}
stop_sshd() { [ -f "${SSH_KEYS:-/nonexistent}/sshd.pid" ] && kill "$(cat "$SSH_KEYS/sshd.pid")"; }
